// Friendly JavaScript API of the attention core, appended to the Emscripten glue
// with --post-js (it runs inside the module factory, where `Module` is this
// instance). It checks JavaScript-side types, fills in documented defaults,
// calls the Embind Session and copies every returned view out of the wasm heap
// at once (views go stale when memory grows). Errors become AttnError with
// .field; the instance keeps working after any of them. See docs/js-api.md.

class AttnError extends Error {
  constructor(field, message, code) {
    super(message);
    this.name = 'AttnError';
    this.field = field;
    this.code = code || 'invalid_argument';
  }
}

(function () {
  var DEFAULT_CAP = 512 * 1024 * 1024;
  var MAX_DIM = 0x7fffffff;
  var session = null;

  function fail(field, message, code) {
    throw new AttnError(field, message, code);
  }
  // The raw Embind class skips every check above: keep it private to this instance.
  var SessionClass = null;
  addOnInit(function () {
    SessionClass = Module['Session'];
    delete Module['Session'];
  });
  function getSession() {
    if (!session) session = new (SessionClass || Module['Session'])();
    return session;
  }
  function isObject(o) {
    return o !== null && typeof o === 'object';
  }
  function intField(o, name, def, min) {
    var x = o[name];
    if (x === undefined || x === null) {
      if (def === undefined) fail(name, name + ' is required');
      return def;
    }
    if (typeof x !== 'number' || !Number.isInteger(x)) fail(name, name + ' must be an integer (got ' + String(x) + ')');
    if (x < min || x > MAX_DIM) fail(name, name + ' must be between ' + min + ' and ' + MAX_DIM + ' (got ' + x + ')');
    return x;
  }
  // Seeds are any whole number a double holds exactly (the page uses uint32 seeds).
  function seedField(o) {
    var x = o.seed;
    if (x === undefined || x === null) return 0;
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) fail('seed', 'seed must be a whole number from 0 to 2^53 - 1 (got ' + String(x) + ')');
    return x;
  }
  function boolField(o, name, def) {
    var x = o[name];
    if (x === undefined || x === null) return def;
    if (typeof x !== 'boolean') fail(name, name + ' must be true or false (got ' + String(x) + ')');
    return x;
  }
  function f32(a, name) {
    if (!(a instanceof Float32Array)) fail(name, name + ' must be a Float32Array');
    return a;
  }
  function u8OrNull(o, name) {
    var x = o[name];
    if (x === undefined || x === null) return null;
    if (!(x instanceof Uint8Array)) fail(name, name + ' must be a Uint8Array or null');
    return x;
  }
  function oneOf(o, name, allowed, def) {
    var x = o[name];
    if (x === undefined || x === null) return def;
    if (allowed.indexOf(x) < 0) fail(name, name + " must be one of '" + allowed.join("', '") + "' (got " + String(x) + ')');
    return x;
  }
  // Mask, scale, fill, kernel and cap: shared by attention and multiHeadAttention.
  function commonOpts(o) {
    var scale = o.scale;
    if (scale === undefined) scale = null;
    if (scale !== null && (typeof scale !== 'number' || !Number.isFinite(scale) || !(scale > 0))) {
      fail('scale', 'scale must be null (1/sqrt(dk)) or a finite positive number (got ' + String(scale) + ')');
    }
    var cap = o.memoryCap === undefined || o.memoryCap === null ? DEFAULT_CAP : o.memoryCap;
    if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 1 || cap > 2 * DEFAULT_CAP) {
      fail('memoryCap', 'memoryCap must be an integer number of bytes from 1 to ' + 2 * DEFAULT_CAP);
    }
    return {
      causal: boolField(o, 'causal', false),
      window: intField(o, 'window', 0, 0),
      keyPadding: u8OrNull(o, 'keyPadding'),
      mask: u8OrNull(o, 'mask'),
      scale: scale,
      maskFill: oneOf(o, 'maskFill', ['neg_inf', 'finite', 'zero'], 'neg_inf'),
      kernel: oneOf(o, 'kernel', ['naive', 'tiled'], 'naive'),
      returnScores: boolField(o, 'returnScores', false),
      memoryCap: cap,
    };
  }
  function copy(a) {
    return a === null || a === undefined ? null : a.slice();
  }
  function unwrap(r) {
    if (!r.ok) fail(r.field, r.message, r.code);
    return r;
  }
  function diag(r, out) {
    out.entropy = copy(r.entropy);
    out.lse = copy(r.lse);
    out.weights = copy(r.weights);
    out.scores = copy(r.scores);
    out.fullyMaskedRows = r.fullyMaskedRows;
    out.nanRows = r.nanRows;
    out.infScoreRows = r.infScoreRows;
    out.scale = r.scale;
    return out;
  }

  Module['AttnError'] = AttnError;
  Module['limits'] = { memoryCap: DEFAULT_CAP };
  // Current size of the wasm memory in bytes (it only grows).
  Module['heapBytes'] = function () {
    return wasmMemory.buffer.byteLength;
  };

  // Shape, common options and dropout of attention and attentionBackward.
  function attentionOpts(opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var heads = intField(opts, 'heads', undefined, 1);
    var o = commonOpts(opts);
    o.heads = heads;
    o.kvHeads = intField(opts, 'kvHeads', heads, 1);
    o.tq = intField(opts, 'tq', undefined, 1);
    o.tk = intField(opts, 'tk', undefined, 1);
    o.dk = intField(opts, 'dk', undefined, 1);
    o.dv = intField(opts, 'dv', undefined, 1);
    var p = opts.dropout === undefined || opts.dropout === null ? 0 : opts.dropout;
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p >= 1) {
      fail('dropout', 'dropout must be a number with 0 <= dropout < 1 (got ' + String(p) + ')');
    }
    o.dropout = p;
    var seed = opts.dropoutSeed === undefined || opts.dropoutSeed === null ? 0 : opts.dropoutSeed;
    if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) {
      fail('dropoutSeed', 'dropoutSeed must be a whole number from 0 to 2^53 - 1 (got ' + String(seed) + ')');
    }
    o.dropoutSeed = seed;
    return o;
  }

  Module['attention'] = function (q, k, v, opts) {
    var o = attentionOpts(opts);
    var r = unwrap(getSession().attention(f32(q, 'q'), f32(k, 'k'), f32(v, 'v'), o));
    return diag(r, { output: copy(r.output) });
  };

  // Gradients of sum(output * dOut): { dq, dk, dv, output, lse }, all copies.
  Module['attentionBackward'] = function (q, k, v, dOut, opts) {
    var o = attentionOpts(opts);
    if (o.returnScores) fail('returnScores', 'attentionBackward has no returnScores');
    var r = unwrap(getSession().attentionBackward(f32(q, 'q'), f32(k, 'k'), f32(v, 'v'),
                                                  f32(dOut, 'dOut'), o));
    return { dq: copy(r.dq), dk: copy(r.dk), dv: copy(r.dv), output: copy(r.output), lse: copy(r.lse) };
  };

  Module['multiHeadAttention'] = function (x, wq, wk, wv, wo, opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var heads = intField(opts, 'heads', undefined, 1);
    var o = commonOpts(opts);
    o.t = intField(opts, 't', undefined, 1);
    o.dModel = intField(opts, 'dModel', undefined, 1);
    o.heads = heads;
    o.kvHeads = intField(opts, 'kvHeads', heads, 1);
    o.dk = intField(opts, 'dk', 0, 1);  // 0: dModel / heads
    o.dv = intField(opts, 'dv', 0, 1);  // 0: dk
    var r = unwrap(getSession().multiHeadAttention(
        f32(x, 'x'), f32(wq, 'wq'), f32(wk, 'wk'), f32(wv, 'wv'), f32(wo, 'wo'), o));
    return diag(r, {
      output: copy(r.output), merged: copy(r.merged), headOutputs: copy(r.headOutputs),
      q: copy(r.q), k: copy(r.k), v: copy(r.v), dk: r.dk, dv: r.dv, kvHeads: r.kvHeads,
    });
  };

  function tokensField(o) {
    var t = o.tokens;
    if (t === undefined || t === null) return null;
    if (!Array.isArray(t) || t.length < 1 || t.length > 4096) fail('tokens', 'tokens must be an array of 1 to 4096 strings');
    for (var i = 0; i < t.length; i++) {
      if (typeof t[i] !== 'string') fail('tokens', 'tokens[' + i + '] must be a string');
    }
    return t.slice();
  }

  Module['example'] = function (name, opts) {
    opts = opts === undefined || opts === null ? {} : opts;
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    if (typeof name !== 'string') fail('name', "name must be 'induction' or 'random'");
    var o;
    if (name === 'induction') {
      var sharp = opts.sharpness === undefined || opts.sharpness === null ? 14 : opts.sharpness;
      if (typeof sharp !== 'number' || !Number.isFinite(sharp) || !(sharp > 0)) fail('sharpness', 'sharpness must be a finite positive number');
      o = { tokens: tokensField(opts), sharpness: sharp };
    } else if (name === 'random') {
      var heads = intField(opts, 'heads', 1, 1);
      o = {
        seed: seedField(opts),
        t: intField(opts, 't', 6, 1), dModel: intField(opts, 'dModel', 8, 1), heads: heads,
        kvHeads: intField(opts, 'kvHeads', heads, 1), dk: intField(opts, 'dk', 0, 1), dv: intField(opts, 'dv', 0, 1),
        causal: boolField(opts, 'causal', true), tokens: tokensField(opts),
      };
    } else {
      fail('name', "unknown example name '" + name + "' (expected 'induction' or 'random')");
    }
    var r = unwrap(getSession().example(name, o));
    return {
      tokens: r.tokens, t: r.t, dModel: r.dModel, heads: r.heads, kvHeads: r.kvHeads, dk: r.dk, dv: r.dv,
      causal: r.causal, x: copy(r.x), wq: copy(r.wq), wk: copy(r.wk), wv: copy(r.wv), wo: copy(r.wo),
    };
  };

  Module['entropyStudy'] = function (opts) {
    opts = opts === undefined || opts === null ? {} : opts;
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var dks = opts.dks === undefined || opts.dks === null ? [16, 64, 256, 1024] : opts.dks;
    if (!Array.isArray(dks) || dks.length < 1 || dks.length > 16) fail('dks', 'dks must be an array of 1 to 16 widths');
    for (var i = 0; i < dks.length; i++) {
      if (!Number.isInteger(dks[i]) || dks[i] < 1 || dks[i] > 8192) fail('dks', 'every entry of dks must be an integer in 1..8192');
    }
    var o = { dks: dks.slice(), keys: intField(opts, 'keys', 16, 1), queries: intField(opts, 'queries', 1000, 1), seed: seedField(opts) };
    var r = unwrap(getSession().entropyStudy(o));
    return { dk: r.dk, scaled: r.scaled, unscaled: r.unscaled, ceiling: r.ceiling };
  };
})();
