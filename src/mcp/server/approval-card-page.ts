/**
 * The approval card's HTML (docs/mcp.md, "The approval card"): one static, self-contained page
 * (no network: its CSP allows nothing outside it) that speaks the MCP Apps protocol to its host
 * over `postMessage` (SEP-1865: `ui/initialize`, `ui/notifications/initialized`, the host's
 * `tool-input` and `tool-result`, and `tools/call`, which the host proxies to this server).
 * It learns the suspension from the tool result's `_meta["toolnexus/pending"]` (2025-11-25), or,
 * while a 2026-07-28 call waits (the host has an `input_required`, no result), asks for the
 * waiting call of the tool (`hostContext.toolInfo`) with the arguments (`tool-input`); it reads it with
 * the app-only status tool and answers with the answer tool: the server decides everything,
 * as the caller's principal; the page only shows. Every value is put in the page as text
 * (`textContent`), never as markup.
 */
const SCRIPT = String.raw`
(function () {
  'use strict';
  var nextId = 1;
  var waiting = {};
  var current = null;
  var toolName = null;
  var root = document.getElementById('card');
  function send(message) { window.parent.postMessage(message, '*'); }
  function request(method, params) {
    var id = nextId++;
    send({ jsonrpc: '2.0', id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { waiting[id] = { resolve: resolve, reject: reject }; });
  }
  function callTool(name, args) { return request('tools/call', { name: name, arguments: args }); }
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function row(list, label, value) {
    list.appendChild(el('dt', label));
    list.appendChild(el('dd', value));
  }
  function textOf(result) {
    var parts = (result && result.content) || [];
    return parts.filter(function (p) { return p && p.type === 'text'; }).map(function (p) { return p.text; }).join('\n');
  }
  function say(text, cls) {
    var old = document.getElementById('message');
    if (old) old.remove();
    var node = el('p', text, cls);
    node.id = 'message';
    root.appendChild(node);
  }
  function load(id) {
    return callTool('toolnexus_approval_status', { id: id }).then(function (result) {
      if (result.isError || !result.structuredContent) { render(null); say(textOf(result), 'error'); return; }
      render(result.structuredContent);
    });
  }
  function field(name, schema, value) {
    var label = el('label', (schema.title || name) + ' ');
    var input;
    if (Array.isArray(schema.enum)) {
      input = document.createElement('select');
      schema.enum.forEach(function (choice) { var option = el('option', choice); option.value = choice; input.appendChild(option); });
      if (value !== undefined) input.value = String(value);
    } else {
      input = document.createElement('input');
      input.type = schema.type === 'boolean' ? 'checkbox' : schema.type === 'number' || schema.type === 'integer' ? 'number' : 'text';
      if (schema.type === 'boolean') input.checked = value === true;
      else if (value !== undefined) input.value = String(value);
    }
    input.name = name;
    input.dataset.type = schema.type;
    label.appendChild(input);
    return label;
  }
  function editedArgs(form) {
    if (!form) return undefined;
    var args = {};
    Array.prototype.forEach.call(form.querySelectorAll('input,select'), function (input) {
      var type = input.dataset.type;
      if (type === 'boolean') args[input.name] = input.checked;
      else if (input.value === '') return;
      else if (type === 'number' || type === 'integer') args[input.name] = Number(input.value);
      else args[input.name] = input.value;
    });
    return args;
  }
  function answer(decision, form) {
    var args = { id: current.id, decision: decision };
    var edited = decision === 'approve' ? editedArgs(form) : undefined;
    if (edited) args.args = edited;
    Array.prototype.forEach.call(root.querySelectorAll('button'), function (b) { b.disabled = true; });
    return callTool('toolnexus_answer_approval', args).then(function (result) {
      var text = textOf(result);
      // A settled call shows its outcome itself; what else came back (a refusal, a signature) is said.
      return load(current.id).then(function () {
        if (result.isError || !current || current.status === 'pending') say(text, result.isError ? 'error' : 'done');
      });
    }, function (error) { say(String(error && error.message || error), 'error'); });
  }
  function render(view) {
    current = view;
    root.textContent = '';
    if (!view) return;
    root.appendChild(el('h1', view.title || view.tool));
    root.appendChild(el('p', view.prompt, 'prompt'));
    var facts = el('dl');
    row(facts, 'Status', view.status);
    if (view.requestedBy) row(facts, 'Requested by', view.requestedBy);
    row(facts, 'Who may answer', view.answerers && view.answerers.length ? view.answerers.join(', ') : 'whom the answer policy allows');
    if (view.quorum) row(facts, 'Approvals', view.quorum.approvals.length + ' of ' + view.quorum.of);
    if (view.expiresAt) row(facts, 'Expires', view.expiresAt);
    if (view.answeredBy) row(facts, 'Answered by', view.answeredBy);
    root.appendChild(facts);
    root.appendChild(el('pre', JSON.stringify(view.args, null, 2), 'args'));
    if (view.outcome) root.appendChild(el('p', view.outcome.output, view.outcome.isError ? 'error outcome' : 'done outcome'));
    if (view.status !== 'pending') return;
    if (!view.mayAnswer) { root.appendChild(el('p', 'You may not answer this call' + (view.refused ? ': ' + view.refused : '') + '.', 'refused')); return; }
    var form = null;
    if (view.edit) {
      form = el('form', undefined, 'edit');
      form.addEventListener('submit', function (event) { event.preventDefault(); });
      Object.keys(view.edit.fields).forEach(function (name) { form.appendChild(field(name, view.edit.fields[name], view.edit.values[name])); });
      root.appendChild(form);
    }
    var actions = el('div', undefined, 'actions');
    var approve = el('button', 'Approve', 'approve');
    approve.id = 'approve';
    approve.addEventListener('click', function () { answer('approve', form); });
    var decline = el('button', 'Decline', 'decline');
    decline.id = 'decline';
    decline.addEventListener('click', function () { answer('decline', null); });
    actions.appendChild(approve);
    actions.appendChild(decline);
    root.appendChild(actions);
  }
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent) return;
    var message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.id !== undefined && message.method === undefined) {
      var pending = waiting[message.id];
      if (!pending) return;
      delete waiting[message.id];
      if (message.error) pending.reject(new Error(message.error.message)); else pending.resolve(message.result);
      return;
    }
    if (message.id !== undefined) { send({ jsonrpc: '2.0', id: message.id, result: {} }); return; }
    if (message.method === 'ui/notifications/tool-input') {
      var given = message.params && message.params.arguments;
      // No call found (not recorded yet, or not one this viewer may see): the tool result may still name it.
      if (toolName && given && !current)
        callTool('toolnexus_approval_status', { tool: toolName, arguments: given }).then(function (result) {
          if (!result.isError && result.structuredContent && !current) render(result.structuredContent);
        }, function () {});
    }
    if (message.method === 'ui/notifications/tool-result') {
      var meta = message.params && message.params._meta;
      var asked = meta && meta['toolnexus/pending'];
      var text = textOf(message.params);
      var cls = message.params && message.params.isError ? 'error' : 'done';
      if (asked && typeof asked.id === 'string') load(asked.id);
      else if (current) load(current.id).then(function () { say(text, cls); });
      else say(text, cls);
    }
  });
  request('ui/initialize', {
    appInfo: { name: 'toolnexus-approval-card', version: '1.0.0' },
    appCapabilities: {},
    protocolVersion: '2026-01-26',
  }).then(function (result) {
    var info = result && result.hostContext && result.hostContext.toolInfo;
    if (info && info.tool && typeof info.tool.name === 'string') toolName = info.tool.name;
    send({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });
  });
})();
`;

const STYLE = `
:root { color-scheme: light dark; font-family: var(--font-sans, system-ui, sans-serif); }
body { margin: 0; padding: 12px; background: var(--color-background-primary, Canvas); color: var(--color-text-primary, CanvasText); }
h1 { font-size: 1.1rem; margin: 0 0 6px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; }
dt { font-weight: 600; }
dd { margin: 0; }
pre.args { background: var(--color-background-secondary, #8881); padding: 6px; overflow: auto; }
.actions { display: flex; gap: 8px; }
form.edit { display: grid; gap: 6px; margin: 8px 0; }
.error { color: var(--color-text-danger, #b00020); }
.done { color: var(--color-text-success, #1b7f3b); }
`;

/** The card's whole document, the same for every call (hosts may prefetch and cache it). */
export const APPROVAL_CARD_HTML =
  '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">' +
  `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">` +
  '<title>Approval</title><style>' +
  STYLE +
  '</style></head><body><main id="card" aria-live="polite"><p>Loading the call…</p></main><script>' +
  SCRIPT +
  '</script></body></html>';
