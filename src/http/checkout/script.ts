// The checkout page's one script, inlined in the page and allowed by its hash (no other script
// runs, none comes from elsewhere). It only checks the card form as the customer types, with the
// server's rules and words (src/domain/checkout/card-form.ts), and keeps a second click from
// sending the form twice; the form works the same without it, checked by the server.
import crypto from 'node:crypto';
import { CARD_MESSAGES } from '../../domain/checkout/card-form.js';

const SOURCE = `(function () {
  'use strict';
  var M = ${JSON.stringify(CARD_MESSAGES)};
  var form = document.getElementById('card-form');
  if (!form) return;
  form.setAttribute('novalidate', '');
  var fields = ['number', 'expiry', 'cvc'];
  var touched = {};
  function el(id) { return document.getElementById(id); }
  function digits(v) { return v.replace(/[\\s-]/g, ''); }
  function luhn(n) {
    var sum = 0, dbl = false;
    for (var i = n.length - 1; i >= 0; i--) {
      var d = n.charCodeAt(i) - 48;
      if (dbl) { d *= 2; if (d > 9) d -= 9; }
      sum += d; dbl = !dbl;
    }
    return sum % 10 === 0;
  }
  function amex(n) { return /^3[47]/.test(n); }
  function check(name) {
    var v = el(name).value;
    if (name === 'number') {
      var n = digits(v);
      if (n === '') return M.numberMissing;
      return /^\\d{12,19}$/.test(n) && luhn(n) ? '' : M.numberInvalid;
    }
    if (name === 'expiry') {
      var m = /^\\s*(\\d{1,2})\\s*\\/?\\s*(\\d{2}|\\d{4})\\s*$/.exec(v);
      if (!m || +m[1] < 1 || +m[1] > 12) return M.expiryInvalid;
      var year = m[2].length === 2 ? 2000 + +m[2] : +m[2];
      var now = new Date();
      return year * 12 + +m[1] - 1 < now.getUTCFullYear() * 12 + now.getUTCMonth() ? M.expiryPast : '';
    }
    var a = amex(digits(el('number').value));
    return (a ? /^\\d{4}$/ : /^\\d{3}$/).test(v.trim()) ? '' : (a ? M.cvcInvalidAmex : M.cvcInvalid);
  }
  function show(name, always) {
    var message = check(name);
    var input = el(name);
    var error = el(name + '-error');
    if (message && (always || touched[name])) {
      input.setAttribute('aria-invalid', 'true');
      error.textContent = message;
    } else if (!message) {
      input.removeAttribute('aria-invalid');
      error.textContent = '';
    }
    return message;
  }
  fields.forEach(function (name) {
    var input = el(name);
    input.addEventListener('input', function () {
      show(name, false);
      if (name === 'number' && touched.cvc) show('cvc', false);
    });
    input.addEventListener('blur', function (event) {
      // Leaving for the pay button: the submit shows every error at once. Shown now, the message
      // would push the button down between press and release, and the click would be lost.
      if (event.relatedTarget && event.relatedTarget.id === 'pay') return;
      if (input.value !== '') touched[name] = true;
      show(name, false);
    });
  });
  var sent = false;
  form.addEventListener('submit', function (event) {
    var first = null;
    fields.forEach(function (name) {
      touched[name] = true;
      if (show(name, true) && !first) first = name;
    });
    if (first || sent) {
      event.preventDefault();
      if (first) el(first).focus();
      return;
    }
    sent = true;
    var button = el('pay');
    button.setAttribute('aria-disabled', 'true');
    button.textContent = button.getAttribute('data-busy');
  });
})();`;

export const CHECKOUT_SCRIPT = SOURCE;
/** For the Content-Security-Policy: this script and no other. */
export const CHECKOUT_SCRIPT_HASH = `'sha256-${crypto.createHash('sha256').update(SOURCE).digest('base64')}'`;
