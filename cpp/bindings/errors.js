// The error type and helpers both browser modules share (attn_core and attn_train), linked
// with --post-js before each module's own API file (api.js, train_api.js). Every check in
// those files throws AttnError with .field (the option or argument at fault) and .code
// ('invalid_argument', 'resource_exhausted', ...), and the instance keeps working.
class AttnError extends Error {
  constructor(field, message, code) {
    super(message);
    this.name = 'AttnError';
    this.field = field;
    this.code = code || 'invalid_argument';
  }
}

function attnFail(field, message, code) {
  throw new AttnError(field, message, code);
}

// An Embind result {ok, field, message, code, ...}: itself when ok, else thrown as AttnError.
function attnUnwrap(r) {
  if (!r.ok) attnFail(r.field, r.message, r.code);
  return r;
}
