/**
 * The parts of the page's script for who may answer (docs/who-may-answer.md): a quorum's
 * signatures, the edit form of an editable approval, and the grants tab. Spliced into the
 * page's one script (src/inbox/page-script.ts), so it shares its helpers (`el`, `api`, `send`,
 * the form fields: `fieldRow`, `fieldValues`) and, like them, sets everything it shows as text.
 */
export const APPROVAL_SCRIPT = String.raw`
  /** A quorum request's approvals so far (its declines are listed beside them, not counted). */
  function approvalCount(item) {
    return item.quorum.signatures.filter(function (s) { return !s.declined; }).length;
  }

  /** Who signed a quorum request so far (or declined it, where it takes several declines), when, and what they said. */
  function signatureList(signatures) {
    var items = signatures.map(function (s) {
      var text = who(s.by) + (s.declined ? ' declined' : '') + ' · ' + new Date(s.at).toLocaleString() + (s.comment ? ' · ' + s.comment : '');
      return el('li', { text: text });
    });
    return el('ul', { className: 'signatures', 'data-testid': 'signatures' }, items);
  }

  /**
   * "Approve with changes": the tool's fields, filled with the arguments as asked, checked here
   * by the tool's schema and then by its DTO on the server, whose refusal is shown on the card.
   */
  function editForm(card, item, reason) {
    var details = el('details', { className: 'edit', 'data-testid': 'edit' });
    details.appendChild(el('summary', { text: 'Approve with changes' }));
    var form = el('form', { novalidate: 'novalidate', 'data-testid': 'edit-form' });
    var inputs = [];
    item.edit.fields.forEach(function (field) {
      var input = fieldInput(field);
      var value = item.edit.values[field.name];
      if (value !== undefined && value !== null) {
        if (field.type === 'boolean') input.checked = value === true; else input.value = String(value);
      }
      input.setAttribute('name', 'edit.' + field.name);
      inputs.push([field, input]);
      fieldRow(form, field, input);
    });
    form.appendChild(el('button', { type: 'submit', className: 'approve', text: 'Approve with these arguments' }));
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var args = fieldValues(card, inputs);
      if (args) send(card, 'suspensions/' + encodeURIComponent(item.id) + '/answer', { ok: true, args: args, comment: reason.value || undefined });
    });
    details.appendChild(form);
    return details;
  }

  /** The grants tab: every standing grant, newest first, with Revoke where the viewer may. */
  function showGrants() {
    var mine = ++generation;
    return api('GET', 'grants').then(function (result) {
      if (mine !== generation || state.tab !== 'grants') return;
      list.textContent = '';
      cards = {};
      if (result.status !== 200) { list.appendChild(el('p', { className: 'error', text: errorText(result) })); return; }
      var grants = result.body.grants;
      if (grants.length === 0) { list.appendChild(el('p', { className: 'empty', text: 'No standing grants.' })); }
      else list.appendChild(grantTable(grants));
      list.appendChild(el('p', { className: 'error', role: 'alert', 'data-testid': 'grant-error' }));
      document.body.setAttribute('data-loaded', String(mine));
    });
  }

  function grantTable(grants) {
    var table = el('table', { 'data-testid': 'grants' });
    table.appendChild(el('tr', {}, ['tool', 'scope', 'for', 'given by', 'given', 'until', 'state', ''].map(function (h) { return el('th', { text: h }); })));
    grants.forEach(function (grant) {
      var row = el('tr', { 'data-id': grant.id, 'data-testid': 'grant' });
      var state = grant.revokedAt ? 'revoked ' + new Date(grant.revokedAt).toLocaleString() : 'live';
      [grant.tool, grant.scope, grant.subject, who(grant.by), new Date(grant.createdAt).toLocaleString(),
        grant.until ? new Date(grant.until).toLocaleString() : 'until revoked', state].forEach(function (text) {
        row.appendChild(el('td', { text: text }));
      });
      var cell = el('td');
      if (grant.mayRevoke) {
        var revoke = el('button', { className: 'decline', text: 'Revoke' });
        revoke.addEventListener('click', function () {
          revoke.disabled = true;
          api('POST', 'grants/' + encodeURIComponent(grant.id) + '/revoke', {}).then(function (done) {
            if (done.status === 200) return showGrants();
            revoke.disabled = false;
            var box = list.querySelector('[data-testid="grant-error"]');
            if (box) box.textContent = errorText(done);
          });
        });
        cell.appendChild(revoke);
      }
      row.appendChild(cell);
      table.appendChild(row);
    });
    return table;
  }
`;
