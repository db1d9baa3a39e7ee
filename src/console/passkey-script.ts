/**
 * The passkey script of the sign-in pages and the console's Security page (served by Rollcall at
 * /console/assets/passkeys.js and /oauth/assets/passkeys.js; the CSP allows no inline script and
 * no other site). A form marked `data-passkey="create"` or `"get"` is shown only where the browser
 * has WebAuthn; on submit the script posts the form's fields (its CSRF token among them) to the
 * form's `data-options` URL, hands the options to navigator.credentials.create or .get (converting
 * base64url to bytes and back, as WebAuthn's JSON encoding says), puts the answer in the form's
 * `credential` field and submits the form, whose post the server answers like any other.
 */
export const PASSKEY_JS = `(function () {
  'use strict';
  if (!window.PublicKeyCredential || !navigator.credentials) return;
  function bytes(text) {
    var b64 = text.replace(/-/g, '+').replace(/_/g, '/');
    while (b64.length % 4) b64 += '=';
    var raw = atob(b64), out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out.buffer;
  }
  function text(buffer) {
    var view = new Uint8Array(buffer), raw = '';
    for (var i = 0; i < view.length; i++) raw += String.fromCharCode(view[i]);
    return btoa(raw).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  }
  function credentials(list) {
    return (list || []).map(function (c) { return { type: c.type, id: bytes(c.id), transports: c.transports }; });
  }
  function creation(o) {
    o.challenge = bytes(o.challenge);
    o.user.id = bytes(o.user.id);
    o.excludeCredentials = credentials(o.excludeCredentials);
    return o;
  }
  function request(o) {
    o.challenge = bytes(o.challenge);
    o.allowCredentials = credentials(o.allowCredentials);
    return o;
  }
  function answer(c) {
    var r = c.response;
    var out = { id: c.id, rawId: text(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {}, response: { clientDataJSON: text(r.clientDataJSON) } };
    if (c.authenticatorAttachment) out.authenticatorAttachment = c.authenticatorAttachment;
    if (r.attestationObject) {
      out.response.attestationObject = text(r.attestationObject);
      if (r.getTransports) out.response.transports = r.getTransports();
    } else {
      out.response.authenticatorData = text(r.authenticatorData);
      out.response.signature = text(r.signature);
      if (r.userHandle) out.response.userHandle = text(r.userHandle);
    }
    return out;
  }
  document.querySelectorAll('form[data-passkey]').forEach(function (form) { form.hidden = false; });
  document.addEventListener('submit', function (event) {
    var form = event.target;
    var mode = form.getAttribute && form.getAttribute('data-passkey');
    if (!mode) return;
    event.preventDefault();
    var status = form.querySelector('[data-passkey-status]');
    function say(message) { if (status) status.textContent = message; }
    var body = new URLSearchParams();
    new FormData(form).forEach(function (value, name) { if (name !== 'credential') body.append(name, String(value)); });
    say('Waiting for your passkey…');
    fetch(form.getAttribute('data-options'), { method: 'POST', body: body, credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (res) { if (!res.ok) throw new Error('options'); return res.json(); })
      .then(function (options) {
        return mode === 'create' ? navigator.credentials.create({ publicKey: creation(options) }) : navigator.credentials.get({ publicKey: request(options) });
      })
      .then(function (credential) {
        if (!credential) throw new Error('none');
        form.querySelector('input[name=credential]').value = JSON.stringify(answer(credential));
        say('Checking…');
        form.submit();
      })
      .catch(function () { say('No passkey answered, or the request was cancelled. Try again.'); });
  });
})();
`;
