import { APPROVAL_SCRIPT } from './page-approval-script';

/**
 * The page's script, served inline under the page's CSP nonce. Everything it shows is set as
 * text (never parsed as HTML), so a prompt or an argument cannot inject markup. It talks to
 * the JSON API next to it with the page's CSRF token, and refetches when the event stream says
 * something changed. A refetch keeps every card whose suspension did not change (the same
 * DOM node, so what is typed in it and its focus stay), and what is typed into any card is
 * also kept by suspension and field name, so a card drawn anew gets it back.
 */
export const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var csrf = document.querySelector('meta[name="toolnexus-csrf"]').getAttribute('content');
  var state = { tab: 'open', status: 'open', kind: '', runId: '' };
  var list = document.getElementById('list');
  var live = document.getElementById('live');
  var outcome = document.getElementById('outcome');
  // What the person typed, by suspension id and field name: survives a card being drawn anew.
  var drafts = {};
  // The cards on the page, by suspension id, with the JSON they were drawn from.
  var cards = {};

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

  function draftKey(id, input) { return id + '\u0000' + input.name; }

  /** Fills a new card's fields from the drafts, and keeps the drafts up to date as the person types. */
  function keepDrafts(node, id) {
    node.querySelectorAll('input[name], textarea[name], select[name]').forEach(function (input) {
      var key = draftKey(id, input);
      if (Object.prototype.hasOwnProperty.call(drafts, key)) {
        if (input.type === 'checkbox') input.checked = drafts[key] === true; else input.value = drafts[key];
      }
      var save = function () { drafts[key] = input.type === 'checkbox' ? input.checked : input.value; };
      input.addEventListener('input', save);
      input.addEventListener('change', save);
    });
  }

  function forgetDrafts(id) {
    Object.keys(drafts).forEach(function (key) { if (key.indexOf(id + '\u0000') === 0) delete drafts[key]; });
  }

  /** Where the person is typing, to put them back there if their card is drawn anew. */
  function focusOf() {
    var active = document.activeElement;
    var holder = active && active.name && active.closest ? active.closest('article[data-id]') : null;
    if (!holder || !list.contains(holder)) return null;
    var at = { id: holder.getAttribute('data-id'), name: active.name, node: active };
    try { at.start = active.selectionStart; at.end = active.selectionEnd; } catch (e) { /* not a text field */ }
    return at;
  }

  function restoreFocus(at) {
    if (!at || (at.node.isConnected && document.activeElement === at.node)) return;
    var holder = cards[at.id] && cards[at.id].node;
    var input = holder ? holder.querySelector('[name="' + CSS.escape(at.name) + '"]') : null;
    if (!input) return;
    input.focus();
    if (typeof at.start === 'number' && typeof input.setSelectionRange === 'function') {
      try { input.setSelectionRange(at.start, at.end); } catch (e) { /* not a text field */ }
    }
  }

  /** What came of an answer, shown until the next one: the tool's result (redacted as the list is) and where the run went. */
  function showOutcome(body) {
    outcome.textContent = '';
    var s = body && body.suspension;
    if (!s) return;
    var by = s.answeredBy ? ' by ' + who(s.answeredBy) : '';
    outcome.appendChild(el('h2', { text: s.tool + ': ' + s.status + by }));
    if (s.outcome) {
      outcome.appendChild(el('div', { className: 'hint', text: s.outcome.isError ? 'the tool answered with an error' : 'the tool answered' }));
      outcome.appendChild(el('pre', { text: s.outcome.output, 'data-testid': 'outcome-output' }));
    } else {
      outcome.appendChild(el('div', { className: 'hint', text: 'The tool has not answered yet; its result will be in the History tab.' }));
    }
    if (body.run) outcome.appendChild(el('div', { className: 'hint', text: 'run ' + body.run.runId + ': ' + body.run.status, 'data-testid': 'outcome-run' }));
    var close = el('button', { text: 'Dismiss' });
    close.addEventListener('click', function () { outcome.textContent = ''; outcome.hidden = true; });
    outcome.appendChild(close);
    outcome.hidden = false;
  }

  function done(card, result) {
    if (result.status >= 200 && result.status < 300) {
      forgetDrafts(card.getAttribute('data-id'));
      showOutcome(result.body);
      refresh();
      return;
    }
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
      input = el('input', { type: field.writeOnly ? 'password' : 'text', name: field.name, minlength: field.minLength, maxlength: field.maxLength, autocomplete: field.writeOnly ? 'one-time-code' : undefined });
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

  /** One labelled field of a form: its input, its description, and where its problem is shown. */
  function fieldRow(form, field, input) {
    var label = el('label', {}, [document.createTextNode(field.title || field.name)]);
    if (field.required) label.appendChild(el('span', { className: 'req', text: ' *', title: 'required' }));
    form.appendChild(el('div', { className: 'field' }, [label, input,
      field.description ? el('span', { className: 'hint', text: field.description }) : null,
      el('span', { className: 'problem', 'data-field': field.name })]));
  }

  /** The values of a form's [field, input] pairs as their schema checks them; undefined when any is refused (the problems shown on the card). */
  function fieldValues(card, inputs) {
    var values = {}, problems = [];
    inputs.forEach(function (pair) {
      var value = fieldValue(pair[0], pair[1]);
      var problem = fieldProblem(pair[0], value);
      if (problem) problems.push({ field: pair[0].name, message: problem });
      if (value !== undefined) values[pair[0].name] = value;
    });
    showProblems(card, problems);
    return problems.length === 0 ? values : undefined;
  }

  function inputForm(card, item) {
    var form = el('form', { novalidate: 'novalidate', 'data-testid': 'input-form' });
    var inputs = [];
    item.fields.forEach(function (field) {
      var input = fieldInput(field);
      inputs.push([field, input]);
      fieldRow(form, field, input);
    });
    var submit = el('button', { type: 'submit', className: 'approve', text: 'Submit' });
    form.appendChild(submit);
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var data = fieldValues(card, inputs);
      if (data) send(card, 'suspensions/' + encodeURIComponent(item.id) + '/answer', { ok: true, data: data });
    });
    return form;
  }

${APPROVAL_SCRIPT}

  function card(item) {
    var node = el('article', { className: 'card', 'data-id': item.id, 'data-testid': 'suspension' });
    node.appendChild(el('h2', {}, [el('span', { className: 'badge ' + item.kind, text: item.kind }), document.createTextNode(item.tool)]));
    var meta = el('div', { className: 'meta' }, [
      el('span', { text: 'status: ' + item.status, 'data-testid': 'status' }),
      el('span', { text: 'asked by: ' + item.requestedBy }),
      el('span', { text: 'created ' + new Date(item.createdAt).toLocaleString() }),
      el('span', { text: 'id ' + item.id })]);
    if (item.quorum) {
      var approvals = item.quorum.signatures.filter(function (s) { return !s.declined; });
      var signers = approvals.map(function (s) { return s.by.name || s.by.id; });
      meta.appendChild(el('span', { 'data-testid': 'quorum',
        text: 'approvals: ' + approvals.length + ' of ' + item.quorum.of + (signers.length ? ' (' + signers.join(', ') + ')' : '') }));
    }
    if (item.escalation) {
      var to = item.escalation.to.join(', ');
      meta.appendChild(el('span', { 'data-testid': 'escalation', className: item.escalation.escalated ? 'escalated' : '',
        text: item.escalation.escalated ? 'escalated to ' + to : 'escalates to ' + to + ' at ' + new Date(item.escalation.at).toLocaleString() }));
    }
    if (item.runId) {
      var run = el('a', { href: '#', text: 'run ' + item.runId, title: 'show only this run' });
      run.addEventListener('click', function (event) { event.preventDefault(); document.getElementById('run').value = item.runId; state.runId = item.runId; refresh(); });
      meta.appendChild(run);
    }
    if (item.expiresAt) meta.appendChild(el('span', { className: 'expiry', 'data-expires': item.expiresAt }));
    node.appendChild(meta);
    node.appendChild(el('div', { className: 'prompt', text: item.prompt, 'data-testid': 'prompt' }));
    if (item.quorum && item.quorum.signatures.length) node.appendChild(signatureList(item.quorum.signatures));
    if (item.receipts && item.receipts.length) node.appendChild(receiptList(item.receipts));
    if (item.deliveries && item.deliveries.length) node.appendChild(deliveryList(item.deliveries));
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
      var approve = el('button', { className: 'approve', text: item.quorum ? 'Sign (' + approvalCount(item) + ' of ' + item.quorum.of + ')' : 'Approve' });
      var decline = el('button', { className: 'decline', text: 'Decline' });
      approve.addEventListener('click', function () { send(node, path + '/answer', { ok: true, comment: reason.value || undefined }); });
      decline.addEventListener('click', function () {
        var body = { ok: false, reason: 'declined', comment: reason.value || undefined };
        if (reason.value) body.data = { reason: reason.value };
        send(node, path + '/answer', body);
      });
      actions.appendChild(reason); actions.appendChild(approve); actions.appendChild(decline);
      if (item.edit) actions.appendChild(editForm(node, item, reason));
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
    keepDrafts(node, item.id);
    return node;
  }

  /** What downstream systems answered the call's attempts: "stripe says ch_1 succeeded (attempt 1)". */
  function receiptList(receipts) {
    return el('ul', { 'data-testid': 'receipts' }, receipts.map(function (r) {
      return el('li', { text: r.system + ' says ' + r.id + ' ' + r.status + ' (attempt ' + r.attempt + ')' });
    }));
  }

  /** Where the request went: "slack:C0FINANCE: posted", "email:ann: failed 3 times, next try 12:05: <error>". */
  function deliveryList(deliveries) {
    return el('ul', { 'data-testid': 'deliveries' }, deliveries.map(function (d) {
      var state = d.attempts > 0 ? 'failed ' + d.attempts + (d.attempts === 1 ? ' time' : ' times') : d.posted ? 'posted' : 'not posted yet';
      if (d.attempts > 0 && d.nextAttemptAt) state += ', next try ' + new Date(d.nextAttemptAt).toLocaleTimeString();
      if (d.attempts > 0 && d.error) state += ': ' + d.error;
      return el('li', { text: (d.escalation ? 'escalation ' : '') + d.target + ': ' + state });
    }));
  }

  function historyTable(items) {
    var table = el('table', { 'data-testid': 'history' });
    table.appendChild(el('tr', {}, ['settled', 'tool', 'kind', 'prompt', 'outcome', 'answered by', 'comment'].map(function (h) { return el('th', { text: h }); })));
    items.forEach(function (item) {
      var row = el('tr', { 'data-id': item.id });
      [item.updatedAt ? new Date(item.updatedAt).toLocaleString() : '', item.tool, item.kind, item.prompt].forEach(function (text) { row.appendChild(el('td', { text: text })); });
      row.appendChild(el('td', { className: 'status-' + item.status }, [el('strong', { text: item.status }), el('div', { className: 'hint', text: item.outcome ? item.outcome.output : '' })].concat(item.receipts ? [receiptList(item.receipts)] : [])));
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
      var items = result.status === 200 ? result.body.suspensions : [];
      if (result.status !== 200 || items.length === 0 || state.tab === 'history') {
        list.textContent = '';
        cards = {};
        if (result.status !== 200) { list.appendChild(el('p', { className: 'error', text: errorText(result) })); return; }
        document.getElementById('count').textContent = String(items.length);
        if (items.length === 0) list.appendChild(el('p', { className: 'empty', text: state.tab === 'open' ? 'Nothing waits for an answer.' : 'No settled suspensions yet.' }));
        else list.appendChild(historyTable(items));
      } else {
        document.getElementById('count').textContent = String(items.length);
        draw(items);
      }
      document.querySelectorAll('[data-expires]').forEach(countdown);
      document.body.setAttribute('data-loaded', String(mine));
    });
  }

  /**
   * Brings the cards in line with the items, touching only what changed: an unchanged card stays
   * the same node and is moved only when the order says so, so its text and focus stay.
   */
  function draw(items) {
    var at = focusOf();
    Array.prototype.slice.call(list.children).forEach(function (child) {
      if (child.tagName !== 'ARTICLE') list.removeChild(child);
    });
    var next = {};
    var wanted = items.map(function (item) {
      var print = JSON.stringify(item);
      var old = cards[item.id];
      var node = old && old.print === print ? old.node : card(item);
      next[item.id] = { node: node, print: print };
      return node;
    });
    Object.keys(cards).forEach(function (id) {
      var node = cards[id].node;
      if ((!next[id] || next[id].node !== node) && node.parentNode === list) list.removeChild(node);
    });
    wanted.forEach(function (node, i) {
      var here = list.children[i];
      if (here !== node) list.insertBefore(node, here || null);
    });
    cards = next;
    // Drafts of suspensions no longer open are of no use: the unfiltered open list says which those are.
    if (state.status === 'open' && !state.kind && !state.runId) {
      Object.keys(drafts).forEach(function (key) { if (!next[key.slice(0, key.indexOf('\u0000'))]) delete drafts[key]; });
    }
    restoreFocus(at);
  }

  var statusSelect = document.getElementById('status');
  var STATUSES = { open: ['open', 'pending', 'resolving'], history: ['settled', 'resolved', 'declined', 'expired', 'cancelled'] };
  function setTab(tab) {
    document.querySelectorAll('nav button').forEach(function (b) { b.classList.toggle('active', b.getAttribute('data-tab') === tab); });
    document.querySelector('.filters').hidden = tab === 'grants';
    if (tab === 'grants') { state.tab = tab; return showGrants(); }
    state.tab = tab; state.status = STATUSES[tab][0];
    statusSelect.textContent = '';
    STATUSES[tab].forEach(function (s) { statusSelect.appendChild(el('option', { value: s, text: s })); });
    refresh();
  }
  document.querySelectorAll('nav button').forEach(function (b) { b.addEventListener('click', function () { setTab(b.getAttribute('data-tab')); }); });
  statusSelect.addEventListener('change', function () { state.status = statusSelect.value; refresh(); });
  document.getElementById('kind').addEventListener('change', function (e) { state.kind = e.target.value; refresh(); });
  document.getElementById('run').addEventListener('change', function (e) { state.runId = e.target.value.trim(); refresh(); });

  function listen() {
    var source = new EventSource('api/events');
    source.addEventListener('open', function () { live.textContent = 'live'; live.classList.add('on'); });
    source.addEventListener('change', function () { if (state.tab === 'grants') showGrants(); else refresh(); });
    source.addEventListener('error', function () { live.textContent = 'reconnecting…'; live.classList.remove('on'); });
  }
  setTab('open');
  listen();
})();
`;
