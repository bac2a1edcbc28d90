/**
 * The page's script, served inline under the page's CSP nonce. Everything it shows is set as
 * text (never parsed as HTML), so a prompt or an argument cannot inject markup. It talks to
 * the JSON API next to it with the page's CSRF token, and refetches when the event stream says
 * something changed.
 */
export const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var csrf = document.querySelector('meta[name="toolnexus-csrf"]').getAttribute('content');
  var state = { tab: 'open', status: 'open', kind: '', runId: '' };
  var list = document.getElementById('list');
  var live = document.getElementById('live');

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (key) {
      if (key === 'text') node.textContent = attrs[key];
      else if (key === 'className') node.className = attrs[key];
      else if (attrs[key] !== undefined && attrs[key] !== null) node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function api(method, path, body) {
    var init = { method: method, credentials: 'same-origin', headers: { 'x-toolnexus-csrf': csrf } };
    if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch('api/' + path, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (json) { return { status: response.status, body: json }; });
    });
  }

  function who(principal) { return principal ? (principal.name || principal.id) : 'unknown'; }

  function errorText(result) {
    var error = result.body && result.body.error;
    if (!error) return 'HTTP ' + result.status;
    if (error.answeredBy) return error.message + ' (answered by ' + who(error.answeredBy) + ')';
    return error.message;
  }

  function countdown(node) {
    var at = Date.parse(node.getAttribute('data-expires'));
    var left = Math.round((at - Date.now()) / 1000);
    node.classList.toggle('soon', left > 0 && left < 300);
    node.classList.toggle('gone', left <= 0);
    if (left <= 0) { node.textContent = 'expired'; return; }
    var d = Math.floor(left / 86400), h = Math.floor(left % 86400 / 3600), m = Math.floor(left % 3600 / 60), s = left % 60;
    node.textContent = 'expires in ' + (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + (d || h || m ? m + 'm ' : '') + s + 's';
  }
  setInterval(function () { document.querySelectorAll('[data-expires]').forEach(countdown); }, 1000);

  function pre(value) { return el('pre', { text: JSON.stringify(value, null, 2) }); }

  function done(card, result) {
    if (result.status >= 200 && result.status < 300) { refresh(); return; }
    var box = card.querySelector('.error');
    box.textContent = errorText(result);
    card.querySelectorAll('button').forEach(function (b) { b.disabled = false; });
    if (result.body && result.body.error && result.body.error.problems) showProblems(card, result.body.error.problems);
  }

  function send(card, path, body) {
    card.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
    card.querySelector('.error').textContent = '';
    api('POST', path, body).then(function (result) { done(card, result); }, function () {
      card.querySelector('.error').textContent = 'the inbox could not be reached';
      card.querySelectorAll('button').forEach(function (b) { b.disabled = false; });
    });
  }

  function showProblems(card, problems) {
    card.querySelectorAll('.problem').forEach(function (p) { p.textContent = ''; });
    problems.forEach(function (problem) {
      var slot = card.querySelector('.problem[data-field="' + CSS.escape(problem.field) + '"]');
      if (slot) slot.textContent = problem.message;
    });
  }

  function fieldInput(field) {
    var input;
    if (field.enum) {
      input = el('select', { name: field.name });
      input.appendChild(el('option', { value: '', text: field.required ? 'choose…' : '(none)' }));
      field.enum.forEach(function (value) { input.appendChild(el('option', { value: String(value), text: String(value) })); });
    } else if (field.type === 'boolean') {
      input = el('input', { type: 'checkbox', name: field.name });
    } else if (field.type === 'number' || field.type === 'integer') {
      input = el('input', { type: 'number', name: field.name, step: field.type === 'integer' ? '1' : 'any', min: field.minimum, max: field.maximum });
    } else {
      input = el('input', { type: 'text', name: field.name, minlength: field.minLength, maxlength: field.maxLength });
    }
    if (field.required && field.type !== 'boolean') input.setAttribute('aria-required', 'true');
    return input;
  }

  function fieldValue(field, input) {
    if (field.type === 'boolean') return input.checked;
    var raw = input.value;
    if (raw === '') return undefined;
    if (field.type === 'number' || field.type === 'integer') return Number(raw);
    if (field.enum && typeof field.enum[0] === 'number') return Number(raw);
    return raw;
  }

  function fieldProblem(field, value) {
    if (value === undefined) return field.required ? 'is required' : '';
    if (field.type === 'number' || field.type === 'integer') {
      if (!isFinite(value)) return 'must be a number';
      if (field.type === 'integer' && Math.floor(value) !== value) return 'must be a whole number';
      if (field.minimum !== undefined && value < field.minimum) return 'must be at least ' + field.minimum;
      if (field.maximum !== undefined && value > field.maximum) return 'must be at most ' + field.maximum;
    }
    if (field.type === 'string') {
      if (field.minLength !== undefined && value.length < field.minLength) return 'must be at least ' + field.minLength + ' characters';
      if (field.maxLength !== undefined && value.length > field.maxLength) return 'must be at most ' + field.maxLength + ' characters';
    }
    return '';
  }

  function inputForm(card, item) {
    var form = el('form', { novalidate: 'novalidate', 'data-testid': 'input-form' });
    var inputs = [];
    item.fields.forEach(function (field) {
      var input = fieldInput(field);
      inputs.push([field, input]);
      var label = el('label', {}, [document.createTextNode(field.title || field.name)]);
      if (field.required) label.appendChild(el('span', { className: 'req', text: ' *', title: 'required' }));
      form.appendChild(el('div', { className: 'field' }, [label, input,
        field.description ? el('span', { className: 'hint', text: field.description }) : null,
        el('span', { className: 'problem', 'data-field': field.name })]));
    });
    var submit = el('button', { type: 'submit', className: 'approve', text: 'Submit' });
    form.appendChild(submit);
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var data = {}, problems = [];
      inputs.forEach(function (pair) {
        var value = fieldValue(pair[0], pair[1]);
        var problem = fieldProblem(pair[0], value);
        if (problem) problems.push({ field: pair[0].name, message: problem });
        if (value !== undefined) data[pair[0].name] = value;
      });
      showProblems(card, problems);
      if (problems.length === 0) send(card, 'suspensions/' + encodeURIComponent(item.id) + '/answer', { ok: true, data: data });
    });
    return form;
  }

  function card(item) {
    var node = el('article', { className: 'card', 'data-id': item.id, 'data-testid': 'suspension' });
    node.appendChild(el('h2', {}, [el('span', { className: 'badge ' + item.kind, text: item.kind }), document.createTextNode(item.tool)]));
    var meta = el('div', { className: 'meta' }, [
      el('span', { text: 'status: ' + item.status, 'data-testid': 'status' }),
      el('span', { text: 'asked by: ' + item.requestedBy }),
      el('span', { text: 'created ' + new Date(item.createdAt).toLocaleString() }),
      el('span', { text: 'id ' + item.id })]);
    if (item.runId) {
      var run = el('a', { href: '#', text: 'run ' + item.runId, title: 'show only this run' });
      run.addEventListener('click', function (event) { event.preventDefault(); document.getElementById('run').value = item.runId; state.runId = item.runId; refresh(); });
      meta.appendChild(run);
    }
    if (item.expiresAt) meta.appendChild(el('span', { className: 'expiry', 'data-expires': item.expiresAt }));
    node.appendChild(meta);
    node.appendChild(el('div', { className: 'prompt', text: item.prompt, 'data-testid': 'prompt' }));
    node.appendChild(el('div', { className: 'hint', text: 'arguments' }));
    node.appendChild(pre(item.args));
    var extra = item.data ? Object.keys(item.data).filter(function (k) { return k !== 'requestedBy'; }) : [];
    if (extra.length) { node.appendChild(el('div', { className: 'hint', text: 'request data' })); node.appendChild(pre(item.data)); }
    if (item.url) node.appendChild(el('p', {}, [document.createTextNode('Sign in at: '), el('a', { href: item.url, target: '_blank', rel: 'noopener noreferrer', text: item.url })]));
    var actions = el('div', { className: 'actions' });
    var canAnswer = item.actions.indexOf('answer') >= 0, canCancel = item.actions.indexOf('cancel') >= 0;
    var path = 'suspensions/' + encodeURIComponent(item.id);
    if (canAnswer && item.kind === 'approval') {
      var reason = el('textarea', { placeholder: 'reason (optional)', 'aria-label': 'reason', name: 'reason' });
      var approve = el('button', { className: 'approve', text: 'Approve' });
      var decline = el('button', { className: 'decline', text: 'Decline' });
      approve.addEventListener('click', function () { send(node, path + '/answer', { ok: true, comment: reason.value || undefined }); });
      decline.addEventListener('click', function () {
        var body = { ok: false, reason: 'declined', comment: reason.value || undefined };
        if (reason.value) body.data = { reason: reason.value };
        send(node, path + '/answer', body);
      });
      actions.appendChild(reason); actions.appendChild(approve); actions.appendChild(decline);
    } else if (canAnswer && item.fields) {
      actions.appendChild(inputForm(node, item));
    }
    if (canCancel) {
      var cancel = el('button', { text: 'Cancel request' });
      cancel.addEventListener('click', function () { send(node, path + '/cancel', {}); });
      actions.appendChild(cancel);
    }
    if (item.status === 'pending' && !canAnswer && !canCancel) actions.appendChild(el('span', { className: 'hint', text: 'you may not answer this one' }));
    node.appendChild(actions);
    node.appendChild(el('div', { className: 'error', role: 'alert' }));
    return node;
  }

  function historyTable(items) {
    var table = el('table', { 'data-testid': 'history' });
    table.appendChild(el('tr', {}, ['settled', 'tool', 'kind', 'prompt', 'outcome', 'answered by', 'comment'].map(function (h) { return el('th', { text: h }); })));
    items.forEach(function (item) {
      var row = el('tr', { 'data-id': item.id });
      [item.updatedAt ? new Date(item.updatedAt).toLocaleString() : '', item.tool, item.kind, item.prompt].forEach(function (text) { row.appendChild(el('td', { text: text })); });
      row.appendChild(el('td', { className: 'status-' + item.status }, [el('strong', { text: item.status }), el('div', { className: 'hint', text: item.outcome ? item.outcome.output : '' })]));
      row.appendChild(el('td', { text: item.answeredBy ? who(item.answeredBy) : '' }));
      row.appendChild(el('td', { text: item.comment || '' }));
      table.appendChild(row);
    });
    return table;
  }

  var generation = 0;
  function refresh() {
    var mine = ++generation;
    var params = new URLSearchParams({ status: state.status });
    if (state.kind) params.set('kind', state.kind);
    if (state.runId) params.set('runId', state.runId);
    return api('GET', 'suspensions?' + params.toString()).then(function (result) {
      if (mine !== generation) return;
      list.textContent = '';
      if (result.status !== 200) { list.appendChild(el('p', { className: 'error', text: errorText(result) })); return; }
      var items = result.body.suspensions;
      document.getElementById('count').textContent = String(items.length);
      if (items.length === 0) { list.appendChild(el('p', { className: 'empty', text: state.tab === 'open' ? 'Nothing waits for an answer.' : 'No settled suspensions yet.' })); return; }
      if (state.tab === 'history') list.appendChild(historyTable(items));
      else items.forEach(function (item) { list.appendChild(card(item)); });
      document.querySelectorAll('[data-expires]').forEach(countdown);
      document.body.setAttribute('data-loaded', String(mine));
    });
  }

  var statusSelect = document.getElementById('status');
  var STATUSES = { open: ['open', 'pending', 'resolving'], history: ['settled', 'resolved', 'declined', 'expired', 'cancelled'] };
  function setTab(tab) {
    state.tab = tab; state.status = STATUSES[tab][0];
    statusSelect.textContent = '';
    STATUSES[tab].forEach(function (s) { statusSelect.appendChild(el('option', { value: s, text: s })); });
    document.querySelectorAll('nav button').forEach(function (b) { b.classList.toggle('active', b.getAttribute('data-tab') === tab); });
    refresh();
  }
  document.querySelectorAll('nav button').forEach(function (b) { b.addEventListener('click', function () { setTab(b.getAttribute('data-tab')); }); });
  statusSelect.addEventListener('change', function () { state.status = statusSelect.value; refresh(); });
  document.getElementById('kind').addEventListener('change', function (e) { state.kind = e.target.value; refresh(); });
  document.getElementById('run').addEventListener('change', function (e) { state.runId = e.target.value.trim(); refresh(); });

  function listen() {
    var source = new EventSource('api/events');
    source.addEventListener('open', function () { live.textContent = 'live'; live.classList.add('on'); });
    source.addEventListener('change', function () { refresh(); });
    source.addEventListener('error', function () { live.textContent = 'reconnecting…'; live.classList.remove('on'); });
  }
  setTab('open');
  listen();
})();
`;
