// The field checks both browser modules share (attn_core's api.js and attn_train's
// train_api.js), linked with --post-js after errors.js and before each module's own API file.
// One rule for both: a field that is missing or null takes its documented default, and a field
// without a default is required; a field that is given is checked whether it is used or not.
// Every failure is an AttnError naming the field, with the same words in both modules
// (tests/js/fields.test.mjs feeds the same bad inputs to both).
var attnFields = (function () {
  var MAX_DIM = 0x7fffffff;  // sizes travel as int32 through Embind

  function given(x) {
    return x !== undefined && x !== null;
  }
  function isObject(o) {
    return o !== null && typeof o === 'object' && !Array.isArray(o);
  }
  // opts itself: an object, or (when optional) missing, which reads as {}.
  function options(o, name, optional) {
    if (!given(o) && optional) return {};
    if (!isObject(o)) attnFail(name, name + ' must be an object');
    return o;
  }
  function got(x) {
    return ' (got ' + (typeof x === 'string' ? "'" + x + "'" : String(x)) + ')';
  }
  // An integer size or count from min to 2^31 - 1.
  function int(o, name, def, min) {
    var x = o[name];
    if (!given(x)) {
      if (def === undefined) attnFail(name, name + ' is required');
      return def;
    }
    if (typeof x !== 'number' || !Number.isInteger(x)) attnFail(name, name + ' must be an integer' + got(x));
    if (x < min || x > MAX_DIM) attnFail(name, name + ' must be between ' + min + ' and ' + MAX_DIM + got(x));
    return x;
  }
  function num(o, name, def) {
    var x = o[name];
    if (!given(x)) return def;
    if (typeof x !== 'number' || !Number.isFinite(x)) attnFail(name, name + ' must be a finite number' + got(x));
    return x;
  }
  function bool(o, name, def) {
    var x = o[name];
    if (!given(x)) return def;
    if (typeof x !== 'boolean') attnFail(name, name + ' must be true or false' + got(x));
    return x;
  }
  function oneOf(o, name, allowed, def) {
    var x = o[name];
    if (!given(x)) return def;
    if (allowed.indexOf(x) < 0) attnFail(name, name + " must be one of '" + allowed.join("', '") + "'" + got(x));
    return x;
  }
  // Seeds: any whole number a double holds exactly (the page uses uint32 seeds).
  function seed(o, name, def) {
    var x = o[name];
    if (!given(x)) return def === undefined ? 0 : def;
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) {
      attnFail(name, name + ' must be a whole number from 0 to 2^53 - 1' + got(x));
    }
    return x;
  }
  // A probability that leaves something: 0 <= p < 1 (dropout).
  function fraction(o, name) {
    var x = o[name];
    if (!given(x)) return 0;
    if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || x >= 1) {
      attnFail(name, name + ' must be a number with 0 <= ' + name + ' < 1' + got(x));
    }
    return x;
  }
  // The score scale: null or 'sqrt' is 1/sqrt(d_k) (returned as null), 'none' is 1.
  function scale(o) {
    var x = o.scale;
    if (!given(x) || x === 'sqrt') return null;
    if (x === 'none') return 1;
    if (typeof x === 'number' && Number.isFinite(x) && x > 0) return x;
    attnFail('scale', "scale must be null or 'sqrt' (1/sqrt(d_k)), 'none' (1) or a finite positive number" + got(x));
  }
  // The memory cap in bytes: 1 to twice the default.
  function memoryCap(o, def) {
    var x = o.memoryCap;
    if (!given(x)) return def;
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 1 || x > 2 * def) {
      attnFail('memoryCap', 'memoryCap must be an integer number of bytes from 1 to ' + 2 * def + got(x));
    }
    return x;
  }
  // A positive finite number, or null (the caller's meaning) when def is null.
  function positive(o, name, def) {
    var x = o[name];
    if (!given(x)) return def;
    if (typeof x !== 'number' || !Number.isFinite(x) || !(x > 0)) {
      attnFail(name, name + ' must be ' + (def === null ? 'null or ' : '') + 'a finite number above 0' + got(x));
    }
    return x;
  }
  // sigmoid's bias: null is -ln(T_k), else any finite number.
  function sigmoidBias(o) {
    var x = o.sigmoidBias;
    if (!given(x)) return null;
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      attnFail('sigmoidBias', 'sigmoidBias must be null (-ln T_k) or a finite number' + got(x));
    }
    return x;
  }
  return {
    given: given, positive: positive, sigmoidBias: sigmoidBias, isObject: isObject, options: options, int: int, num: num, bool: bool,
    oneOf: oneOf, seed: seed, fraction: fraction, scale: scale, memoryCap: memoryCap,
  };
})();
