// Friendly JavaScript API of the attention core, appended to the Emscripten glue
// with --post-js (it runs inside the module factory, where `Module` is this
// instance). It checks JavaScript-side types, fills in documented defaults,
// calls the Embind Session and copies every returned view out of the wasm heap
// at once (views go stale when memory grows). Errors become AttnError with
// .field; the instance keeps working after any of them. See docs/js-api.md.

// The names each string option takes, from the core's tables (attn/names.hpp): read once, when
// the module starts, by whichever block below starts first (addOnInit runs them in reverse),
// frozen, and published as core.names; the checks below use these very arrays.
var attnCoreNames = null;
function attnNamesOnce() {
  if (!attnCoreNames) {
    var names = Module['coreNames']();
    delete Module['coreNames'];
    for (var key in names) Object.freeze(names[key]);
    attnCoreNames = Module['names'] = Object.freeze(names);
  }
  return attnCoreNames;
}

(function () {
  var DEFAULT_CAP = 512 * 1024 * 1024;
  var NAMES = null;  // attnNamesOnce()

  var fail = attnFail;  // errors.js
  // The raw Embind classes skip every check in this file: keep them private to this instance.
  // One session of each per instance (attention_session.cpp, backward_session.cpp,
  // introspect_bindings.cpp), made on first use: each owns the buffers its calls reuse.
  var SESSION_CLASSES = ['AttentionSession', 'BackwardSession', 'CoreSession'];
  var sessionClass = {}, sessions = {};
  addOnInit(function () {
    SESSION_CLASSES.forEach(function (name) {
      sessionClass[name] = Module[name];
      delete Module[name];
    });
  });
  function sessionOf(name) {
    return sessions[name] || (sessions[name] = new (sessionClass[name] || Module[name])());
  }
  function attnSession() {
    return sessionOf('AttentionSession');
  }
  function coreSession() {
    return sessionOf('CoreSession');
  }
  // Field checks shared with the training module (fields.js).
  var isObject = attnFields.isObject;
  function intField(o, name, def, min) {
    return attnFields.int(o, name, def, min);
  }
  function seedField(o) {
    return attnFields.seed(o, 'seed');
  }
  var boolField = attnFields.bool;
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
  var oneOf = attnFields.oneOf;
  // Mask, scale, fill, kernel and cap: shared by attention and multiHeadAttention.
  function commonOpts(o) {
    var scale = attnFields.scale(o);
    var cap = attnFields.memoryCap(o, DEFAULT_CAP);
    return {
      causal: boolField(o, 'causal', false),
      window: intField(o, 'window', 0, 0),
      keyPadding: u8OrNull(o, 'keyPadding'),
      mask: u8OrNull(o, 'mask'),
      scale: scale,
      maskFill: oneOf(o, 'maskFill', NAMES.maskFill, 'neg_inf'),
      kernel: oneOf(o, 'kernel', NAMES.kernel, 'naive'),
      returnScores: boolField(o, 'returnScores', false),
      memoryCap: cap,
    };
  }
  // The attention variants (docs/js-api.md, "Attention variants"): each option is checked
  // whenever it is given, used or not; which combinations a kernel supports is the core's check.
  // Written straight onto o: no intermediate object to copy from on every call.
  function withVariant(o, opts) {
    o.sigmoidBias = attnFields.sigmoidBias(opts);
    o.ropeBase = attnFields.positive(opts, 'ropeBase', 10000);
    o.qkNorm = boolField(opts, 'qkNorm', false);
    o.position = oneOf(opts, 'position', NAMES.position, 'none');
    o.normalizer = oneOf(opts, 'normalizer', NAMES.normalizer, 'softmax');
    o.maxShift = boolField(opts, 'maxShift', true);
    o.maskMode = oneOf(opts, 'maskMode', NAMES.maskMode, 'before');
    o.precision = oneOf(opts, 'precision', NAMES.precision, 'float32');
    return o;
  }
  // Inputs: Float32Array, or also Float64Array under precision 'float64'.
  function floatIn(a, name, precision) {
    if (precision === 'float64' && a instanceof Float64Array) return a;
    if (!(a instanceof Float32Array)) {
      fail(name, name + (precision === 'float64' ? ' must be a Float32Array or Float64Array' : ' must be a Float32Array'));
    }
    return a;
  }
  function copy(a) {
    return a === null || a === undefined ? null : a.slice();
  }
  function copyInto(dst, a) {  // into a caller-owned array when given one
    if (!dst) return copy(a);
    dst.set(a);
    return dst;
  }
  var unwrap = attnUnwrap;
  function diag(r, out) {
    out.entropy = copy(r.entropy);
    out.lse = copy(r.lse);
    out.rowSums = copy(r.rowSums);
    out.weights = copy(r.weights);
    out.scores = copy(r.scores);
    out.fullyMaskedRows = r.fullyMaskedRows;
    out.nanRows = r.nanRows;
    out.infScoreRows = r.infScoreRows;
    out.nanRowsPerHead = r.nanRowsPerHead;  // per query head, sums to nanRows
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
    o.dropout = attnFields.fraction(opts, 'dropout');
    o.dropoutSeed = attnFields.seed(opts, 'dropoutSeed');
    return o;
  }

  // Attention in two raw calls (no per-field Embind traffic). The options go into the session's
  // io block (doubles at the slots the core names: IO, from ioSlots() in attention_session.cpp;
  // a name travels as its position in the core's list), the inputs are copied once straight into
  // buffers the session keeps across calls, and every result is copied once out of the heap.
  // HEAPF64/HEAPF32 are re-read after each call into wasm (memory growth replaces them).
  var IO = null;
  addOnInit(function () {
    IO = Module['ioSlots']();
    delete Module['ioSlots'];
  });
  var ioIndex = -1;  // io block of the session, in doubles (its address never changes)
  function rawFail(s) {
    var e = s.lastError();
    fail(e.field, e.message, e.code);
  }
  function outF32(at, n) {  // the one copy out; null when the result is empty
    return n > 0 ? HEAPF32.slice(at / 4, at / 4 + n) : null;
  }
  // Optional caller-owned arrays to copy results into instead of allocating fresh ones
  // (allocating is most of a small call's overhead, and in Chromium a fresh multi-megabyte array
  // costs more than the kernel); checked before any work.
  function intoArrays(into, lens) {
    if (into === undefined || into === null) return {};
    if (!isObject(into)) fail('into', 'into must be an object or null');
    var r = {};
    for (var key in lens) {
      var a = into[key];
      if (a === undefined || a === null) continue;
      if (!(a instanceof Float32Array) || a.length !== lens[key]) {
        fail('into.' + key, 'into.' + key + ' must be a Float32Array of ' + lens[key] + ' elements');
      }
      r[key] = a;
    }
    return r;
  }
  function outInto(dst, at, n) {
    if (!dst) return outF32(at, n) || new Float32Array(0);
    dst.set(HEAPF32.subarray(at / 4, at / 4 + n));
    return dst;
  }
  // Milliseconds the core spent inside the last attention call's kernel (attn::attention or
  // attention_tiled, timed in wasm): the rest of a call's time is the API's overhead.
  Module['lastKernelMs'] = function () {
    return ioIndex < 0 ? NaN : HEAPF64[ioIndex + IO.kernelMs];
  };
  // precision 'float64': the Embind call on doubles; every result a Float64Array copy.
  function attention64(q, k, v, o, into) {
    if (into !== undefined && into !== null) fail('into', "into is for float32 results (precision 'float64' returns fresh Float64Arrays)");
    var r = unwrap(attnSession().attention64(q, k, v, o));
    return {
      output: copy(r.output), entropy: copy(r.entropy), lse: copy(r.lse), rowSums: copy(r.rowSums),
      weights: copy(r.weights), scores: copy(r.scores), fullyMaskedRows: r.fullyMaskedRows,
      nanRows: r.nanRows, infScoreRows: r.infScoreRows, nanRowsPerHead: r.nanRowsPerHead, scale: r.scale,
    };
  }
  Module['attention'] = function (q, k, v, opts, into) {
    var o = withVariant(attentionOpts(opts), opts);
    floatIn(q, 'q', o.precision), floatIn(k, 'k', o.precision), floatIn(v, 'v', o.precision);
    if (o.precision === 'float64') return attention64(q, k, v, o, into);
    var rows = o.heads * o.tq, cells = rows * o.tk;
    var dst = intoArrays(into, { output: rows * o.dv, entropy: rows, lse: rows, weights: cells,
                                 scores: cells, rowSums: rows });
    if (dst.weights && o.kernel === 'tiled') {
      fail('into.weights', 'into.weights is for the naive kernel (the tiled kernel returns no weights)');
    }
    if (dst.scores && !o.returnScores) fail('into.scores', 'into.scores needs returnScores: true');
    var s = attnSession();
    if (ioIndex < 0) ioIndex = s.ioAddress() / 8;
    var F = HEAPF64, b = ioIndex;
    F[b + IO.heads] = o.heads, F[b + IO.kvHeads] = o.kvHeads, F[b + IO.tq] = o.tq, F[b + IO.tk] = o.tk;
    F[b + IO.dk] = o.dk, F[b + IO.dv] = o.dv, F[b + IO.causal] = o.causal ? 1 : 0, F[b + IO.window] = o.window;
    F[b + IO.scale] = o.scale === null ? NaN : o.scale, F[b + IO.maskFill] = NAMES.maskFill.indexOf(o.maskFill);
    F[b + IO.kernel] = NAMES.kernel.indexOf(o.kernel), F[b + IO.returnScores] = o.returnScores ? 1 : 0;
    F[b + IO.memoryCap] = o.memoryCap, F[b + IO.dropout] = o.dropout, F[b + IO.dropoutSeed] = o.dropoutSeed;
    F[b + IO.qLen] = q.length, F[b + IO.kLen] = k.length, F[b + IO.vLen] = v.length;
    F[b + IO.padLen] = o.keyPadding ? o.keyPadding.length : -1;
    F[b + IO.maskLen] = o.mask ? o.mask.length : -1;
    F[b + IO.qkNorm] = o.qkNorm ? 1 : 0, F[b + IO.position] = NAMES.position.indexOf(o.position);
    F[b + IO.ropeBase] = o.ropeBase, F[b + IO.normalizer] = NAMES.normalizer.indexOf(o.normalizer);
    F[b + IO.sigmoidBias] = o.sigmoidBias === null ? NaN : o.sigmoidBias;
    F[b + IO.maxShift] = o.maxShift ? 1 : 0, F[b + IO.maskMode] = NAMES.maskMode.indexOf(o.maskMode);
    F[b + IO.precision] = NAMES.precision.indexOf(o.precision);
    if (s.prepareAttention() !== 0) rawFail(s);
    F = HEAPF64;  // prepareAttention may have grown the memory
    HEAPF32.set(q, F[b + IO.q] / 4);
    HEAPF32.set(k, F[b + IO.k] / 4);
    HEAPF32.set(v, F[b + IO.v] / 4);
    if (o.keyPadding) HEAPU8.set(o.keyPadding, F[b + IO.pad]);
    if (o.mask) HEAPU8.set(o.mask, F[b + IO.mask]);
    if (s.runAttention() !== 0) rawFail(s);
    F = HEAPF64;
    var rows = F[b + IO.rowsLen], perHead = [];
    for (var h = 0, at = F[b + IO.perHead] / 8; h < F[b + IO.perHeadLen]; h++) perHead.push(F[at + h]);
    return {
      output: outInto(dst.output, F[b + IO.output], F[b + IO.outputLen]),
      entropy: outInto(dst.entropy, F[b + IO.entropy], rows),
      lse: outInto(dst.lse, F[b + IO.lse], rows),
      rowSums: outInto(dst.rowSums, F[b + IO.rowSums], rows),
      weights: F[b + IO.weightsLen] > 0 ? outInto(dst.weights, F[b + IO.weights], F[b + IO.weightsLen]) : null,
      scores: F[b + IO.scoresLen] > 0 ? outInto(dst.scores, F[b + IO.scores], F[b + IO.scoresLen]) : null,
      fullyMaskedRows: F[b + IO.fullyMasked], nanRows: F[b + IO.nanRows],
      infScoreRows: F[b + IO.infScoreRows], nanRowsPerHead: perHead, scale: F[b + IO.effScale],
    };
  };

  // Gradients of sum(output * dOut): { dq, dk, dv, output, lse }, all copies (Float64Array under
  // precision 'float64'). Every variant option training uses (normalizer, sigmoidBias, position,
  // ropeBase, qkNorm); the core refuses the forward-only demonstrations (maxShift false,
  // maskMode 'after', precision 'float16').
  Module['attentionBackward'] = function (q, k, v, dOut, opts) {
    var o = withVariant(attentionOpts(opts), opts);
    if (o.returnScores) fail('returnScores', 'attentionBackward has no returnScores');
    if (o.precision === 'float64') {  // every step in double; Float64Array results
      var p = o.precision;
      var r64 = unwrap(sessionOf('BackwardSession').attentionBackward64(floatIn(q, 'q', p), floatIn(k, 'k', p),
                                                                           floatIn(v, 'v', p), floatIn(dOut, 'dOut', p), o));
      return { dq: copy(r64.dq), dk: copy(r64.dk), dv: copy(r64.dv), output: copy(r64.output), lse: copy(r64.lse) };
    }
    var r = unwrap(sessionOf('BackwardSession').attentionBackward(f32(q, 'q'), f32(k, 'k'), f32(v, 'v'),
                                                                     f32(dOut, 'dOut'), o));
    return { dq: copy(r.dq), dk: copy(r.dk), dv: copy(r.dv), output: copy(r.output), lse: copy(r.lse) };
  };

  Module['multiHeadAttention'] = function (x, wq, wk, wv, wo, opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var heads = intField(opts, 'heads', undefined, 1);
    var o = withVariant(commonOpts(opts), opts);
    o.t = intField(opts, 't', undefined, 1);
    o.dModel = intField(opts, 'dModel', undefined, 1);
    o.heads = heads;
    o.kvHeads = intField(opts, 'kvHeads', heads, 1);
    o.dk = intField(opts, 'dk', 0, 1);  // 0: dModel / heads
    o.dv = intField(opts, 'dv', 0, 1);  // 0: dk
    var p = o.precision;
    // Cross-attention: keys and values from xKv's tk rows (tk defaults to its rows; the core
    // names xKv when its length is not tk*dModel). Without xKv, tk must be t (the core says so).
    var xKv = opts.xKv;
    if (xKv === undefined || xKv === null) {
      o.xKv = null;
      o.tk = intField(opts, 'tk', o.t, 1);
    } else {
      o.xKv = floatIn(xKv, 'xKv', p);
      o.tk = intField(opts, 'tk', Math.max(1, Math.floor(xKv.length / o.dModel)), 1);
    }
    var r = unwrap(attnSession().multiHeadAttention(
        floatIn(x, 'x', p), floatIn(wq, 'wq', p), floatIn(wk, 'wk', p), floatIn(wv, 'wv', p),
        floatIn(wo, 'wo', p), o));
    return diag(r, {
      output: copy(r.output), merged: copy(r.merged), headOutputs: copy(r.headOutputs),
      q: copy(r.q), k: copy(r.k), v: copy(r.v), dk: r.dk, dv: r.dv, kvHeads: r.kvHeads,
    });
  };

  // Step 4 of multiHeadAttention alone: merge per-head outputs (H, T, d_v) into (T, H*d_v) and
  // mix them with wo (H*d_v, d_model). With attention() on multiHeadAttention's q, k, v it gives
  // the same merged and output bit for bit (the page's redraw when only the mask changed).
  Module['mergeHeads'] = function (headOutputs, wo, opts, into) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var cap = commonOpts({ memoryCap: opts.memoryCap }).memoryCap;
    var o = {
      t: intField(opts, 't', undefined, 1), heads: intField(opts, 'heads', undefined, 1),
      dv: intField(opts, 'dv', undefined, 1), dModel: intField(opts, 'dModel', undefined, 1),
      memoryCap: cap,
    };
    var dst = intoArrays(into, { merged: o.t * o.heads * o.dv, output: o.t * o.dModel });
    var r = unwrap(attnSession().mergeHeads(f32(headOutputs, 'headOutputs'), f32(wo, 'wo'), o));
    return { merged: copyInto(dst.merged, r.merged), output: copyInto(dst.output, r.output) };
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

  // Weight init of the random example: 'normal' = N(0,1) as lesson 2 draws it (default),
  // 'scaled' = N(0, 1/dModel), the same draws times 1/sqrt(dModel).
  function initField(opts) {
    var v = opts.init;
    if (v === undefined || v === null) return 'normal';
    if (v !== 'normal' && v !== 'scaled') fail('init', "init must be 'normal' or 'scaled'");
    return v;
  }

  // A list of 1 to 4096 strings (the core names its own, smaller, limits), or null when absent.
  function stringsField(o, name) {
    var t = o[name];
    if (t === undefined || t === null) return null;
    if (!Array.isArray(t) || t.length < 1 || t.length > 4096) fail(name, name + ' must be an array of 1 to 4096 strings');
    for (var i = 0; i < t.length; i++) {
      if (typeof t[i] !== 'string') fail(name, name + '[' + i + '] must be a string');
    }
    return t.slice();
  }

  Module['example'] = function (name, opts) {
    opts = opts === undefined || opts === null ? {} : opts;
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    if (typeof name !== 'string') fail('name', "name must be 'induction', 'alignment' or 'random'");
    var o;
    if (name === 'induction' || name === 'alignment') {
      var sharp = opts.sharpness === undefined || opts.sharpness === null ? 14 : opts.sharpness;
      if (typeof sharp !== 'number' || !Number.isFinite(sharp) || !(sharp > 0)) fail('sharpness', 'sharpness must be a finite positive number');
      o = name === 'induction' ? { tokens: tokensField(opts), sharpness: sharp }
        : { queries: stringsField(opts, 'queries'), keys: stringsField(opts, 'keys'), sharpness: sharp };
    } else if (name === 'random') {
      var heads = intField(opts, 'heads', 1, 1);
      o = {
        seed: seedField(opts),
        t: intField(opts, 't', 6, 1), dModel: intField(opts, 'dModel', 8, 1), heads: heads,
        kvHeads: intField(opts, 'kvHeads', heads, 1), dk: intField(opts, 'dk', 0, 1), dv: intField(opts, 'dv', 0, 1),
        causal: boolField(opts, 'causal', true), tokens: tokensField(opts),
        kvTokens: stringsField(opts, 'kvTokens'),  // cross-attention: X_kv drawn after W_o
        init: initField(opts),
        // 'numpy' = NumPy's default_rng(seed).normal stream (bit for bit)
        generator: oneOf(opts, 'generator', ['splitmix', 'numpy'], 'splitmix'),
      };
    } else {
      fail('name', "unknown example name '" + name + "' (expected 'induction', 'alignment' or 'random')");
    }
    var r = unwrap(coreSession().example(name, o));
    var e = {
      tokens: r.tokens, t: r.t, dModel: r.dModel, heads: r.heads, kvHeads: r.kvHeads, dk: r.dk, dv: r.dv,
      causal: r.causal, x: copy(r.x), wq: copy(r.wq), wk: copy(r.wk), wv: copy(r.wv), wo: copy(r.wo),
    };
    if (r.tk !== undefined) {  // cross-attention: pass e itself as opts (xKv, tk) to multiHeadAttention
      e.kvTokens = r.kvTokens, e.tk = r.tk, e.xKv = copy(r.xKv);
    }
    return e;
  };

  // ---- the core as the page's single source of truth (docs/js-api.md) ----
  // core.limits from the core's own constants (memory cap, tile sizes, SIMD, check tolerances).
  addOnInit(function () {
    NAMES = attnNamesOnce();
    var c = Module['coreConstants']();
    delete Module['coreConstants'];
    DEFAULT_CAP = c.memoryCap;
    Module['limits'] = {
      memoryCap: c.memoryCap,
      relaxedSimd: c.relaxedSimd,  // fused multiply-adds (attn_core_relaxed)
      tile: { queries: c.tileQueries, keys: c.simd ? c.tileKeysSimd : c.tileKeys, scalarKeys: c.tileKeys,
              simdKeys: c.tileKeysSimd, simd: c.simd },
      check: { unitRoundoff: c.checkUnitRoundoff, f32VsF64Abs: c.checkF32VsF64Abs, tiledVsNaiveAbs: c.checkTiledVsNaiveAbs },
    };
  });
  function shapeOpts(opts) {
    var heads = intField(opts, 'heads', undefined, 1);
    var dk = intField(opts, 'dk', undefined, 1);
    return {
      heads: heads, kvHeads: intField(opts, 'kvHeads', heads, 1),
      tq: intField(opts, 'tq', undefined, 1), tk: intField(opts, 'tk', undefined, 1),
      dk: dk, dv: intField(opts, 'dv', dk, 1),
    };
  }
  function kernelArg(opts, kernel) {
    return oneOf({ kernel: kernel === undefined ? opts.kernel : kernel }, 'kernel', NAMES.kernel, 'naive');
  }

  Module['allowedMask'] = function (opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var t = opts.t === undefined || opts.t === null ? undefined : intField(opts, 't', undefined, 1);
    var o = commonOpts(opts);
    o.tq = intField(opts, 'tq', t, 1);
    o.tk = intField(opts, 'tk', t, 1);
    var r = unwrap(coreSession().allowedMask(o));
    return copy(r.mask);
  };

  // One head's softmax step by step (docs/js-api.md): masked, shifted, exps, sums, weights.
  Module['softmaxSteps'] = function (scores, allowed, opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var precision = oneOf(opts, 'precision', ['float32', 'float64'], 'float32');
    var normalizer = oneOf(opts, 'normalizer', ['softmax', 'softmax1'], 'softmax');
    if (!(allowed instanceof Uint8Array)) fail('allowed', 'allowed must be a Uint8Array');
    var r = unwrap(coreSession().softmaxSteps(floatIn(scores, 'scores', precision), allowed, {
      rows: intField(opts, 'rows', undefined, 1), cols: intField(opts, 'cols', undefined, 1),
      maskFill: oneOf(opts, 'maskFill', NAMES.maskFill, 'neg_inf'), maxShift: boolField(opts, 'maxShift', true),
      normalizer: normalizer, precision: precision, memoryCap: attnFields.memoryCap(opts, DEFAULT_CAP),
    }));
    return { masked: copy(r.masked), shifted: copy(r.shifted), exps: copy(r.exps), sums: copy(r.sums), weights: copy(r.weights) };
  };

  // Each head's pattern scores on one sequence (docs/js-api.md): how much of each row goes where a
  // previous-token, an induction or a duplicate-token head would put it.
  Module['patternScores'] = function (tokens, weights, opts) {
    if (opts === undefined) opts = {};
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    if (!(tokens instanceof Int32Array)) fail('tokens', 'tokens must be an Int32Array');
    var r = unwrap(coreSession().patternScores(tokens, f32(weights, 'weights'), {
      heads: intField(opts, 'heads', 1, 1), memoryCap: attnFields.memoryCap(opts, DEFAULT_CAP),
    }));
    return { previousToken: r.previousToken, induction: r.induction, duplicateToken: r.duplicateToken };
  };

  // One score taken apart (docs/js-api.md): the query and key rows as the score uses them, their
  // products, the scale, ALiBi's bias, the row's scores and the best other allowed score.
  Module['scoreBreakdown'] = function (q, k, opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var o = withVariant(commonOpts(opts), opts);
    var sh = shapeOpts(opts);
    o.heads = sh.heads, o.kvHeads = sh.kvHeads, o.tq = sh.tq, o.tk = sh.tk, o.dk = sh.dk, o.dv = sh.dv;
    o.head = intField(opts, 'head', 0, 0);
    o.query = intField(opts, 'query', undefined, 0);
    o.key = intField(opts, 'key', undefined, 0);
    var r = unwrap(coreSession().scoreBreakdown(floatIn(q, 'q', o.precision), floatIn(k, 'k', o.precision), o));
    return {
      qRaw: copy(r.qRaw), kRaw: copy(r.kRaw), q: copy(r.q), k: copy(r.k), products: copy(r.products),
      dot: r.dot, scale: r.scale, bias: r.bias, score: r.score, allowed: r.allowed,
      rowScores: copy(r.rowScores), rowAllowed: copy(r.rowAllowed), nextBest: r.nextBest,
    };
  };

  // One head's queries and keys as points in a plane (docs/js-api.md): the rows as the score
  // uses them on the two directions that keep the most of their squared length (uncentred PCA;
  // d_k = 2: the rows themselves), with each direction's share and the q·k statistics.
  Module['qkMap'] = function (q, k, opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var o = withVariant(commonOpts(opts), opts);
    var sh = shapeOpts(opts);
    o.heads = sh.heads, o.kvHeads = sh.kvHeads, o.tq = sh.tq, o.tk = sh.tk, o.dk = sh.dk, o.dv = sh.dv;
    o.head = intField(opts, 'head', 0, 0);
    var r = unwrap(coreSession().qkMap(floatIn(q, 'q', o.precision), floatIn(k, 'k', o.precision), o));
    return {
      queries: copy(r.queries), keys: copy(r.keys), axes: copy(r.axes), explained: [r.explained[0], r.explained[1]],
      dotMean: r.dotMean, dotStd: r.dotStd, prodStd: r.prodStd, scale: r.scale,
    };
  };

  // A list of indices (an array or an integer typed array of whole numbers from 0 to 2^31 - 1),
  // as a Float64Array for the core; missing or null is none. The core checks the range.
  function indexList(o, name) {
    var x = o[name];
    if (x === undefined || x === null) return new Float64Array(0);
    var typed = ArrayBuffer.isView(x) && !(x instanceof DataView) && !(x instanceof Float32Array) &&
      !(x instanceof Float64Array);
    if (!Array.isArray(x) && !typed) fail(name, name + ' must be an array of indices');
    for (var i = 0; i < x.length; i++) {
      var v = x[i];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) {
        fail(name, name + '[' + i + '] must be a whole number from 0 to 2^31 - 1 (got ' + String(v) + ')');
      }
    }
    return Float64Array.from(x);
  }

  // What a selection of one head's query rows and key columns adds up to (docs/js-api.md):
  // weights (heads, T_q, T_k) → the picked rows' mean and sum (T_k), each query's weight on the
  // picked keys (T_q).
  Module['weightSelection'] = function (weights, opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var r = unwrap(coreSession().weightSelection(f32(weights, 'weights'), {
      heads: intField(opts, 'heads', 1, 1), tq: intField(opts, 'tq', undefined, 1), tk: intField(opts, 'tk', undefined, 1),
      head: intField(opts, 'head', 0, 0), queries: indexList(opts, 'queries'), keys: indexList(opts, 'keys'),
      memoryCap: attnFields.memoryCap(opts, DEFAULT_CAP),
    }));
    return { mean: copy(r.mean), sum: copy(r.sum), column: copy(r.column) };
  };

  Module['keyRanges'] = function (opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var t = opts.t === undefined || opts.t === null ? undefined : intField(opts, 't', undefined, 1);
    var tq = intField(opts, 'tq', t, 1), tk = intField(opts, 'tk', t, 1);
    if (tq > 1 << 28) fail('tq', 'tq must be at most 2^28 for keyRanges');
    var r = unwrap(coreSession().keyRanges({
      tq: tq, tk: tk, causal: boolField(opts, 'causal', false), window: intField(opts, 'window', 0, 0),
    }));
    return copy(r.ranges);
  };

  Module['tiledScratchBytes'] = function (dk) {
    return coreSession().tiledScratchBytes(intField({ dk: dk }, 'dk', undefined, 1));
  };

  Module['estimateBytes'] = function (opts, kernel) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var o = withVariant(shapeOpts(opts), opts);
    o.kernel = kernelArg(opts, kernel);
    o.returnScores = boolField(opts, 'returnScores', false);
    return unwrap(coreSession().estimateBytes(o)).bytes;
  };

  Module['estimateMultiHeadBytes'] = function (opts, kernel) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var heads = intField(opts, 'heads', undefined, 1);
    var o = {
      t: intField(opts, 't', undefined, 1), tk: intField(opts, 'tk', 0, 1), dModel: intField(opts, 'dModel', undefined, 1), heads: heads,
      kvHeads: intField(opts, 'kvHeads', heads, 1), dk: intField(opts, 'dk', 0, 1), dv: intField(opts, 'dv', 0, 1),
      kernel: kernelArg(opts, kernel), returnScores: boolField(opts, 'returnScores', false),
    };
    return unwrap(coreSession().estimateMultiHeadBytes(withVariant(o, opts))).bytes;
  };

  Module['check'] = function (q, k, v, opts) {
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var s = shapeOpts(opts);
    var o = commonOpts(opts);
    for (var key in s) o[key] = s[key];
    var r = unwrap(coreSession().check(f32(q, 'q'), f32(k, 'k'), f32(v, 'v'), o));
    return {
      f32VsF64: { maxAbs: r.f32VsF64, tolerance: r.f32VsF64Tolerance },
      tiledVsNaive: { maxAbs: r.tiledVsNaive, tolerance: r.tiledVsNaiveTolerance },
      maxAbsScore: r.maxAbsScore, maxAbsV: r.maxAbsV, simd: r.simd, pass: r.pass,
    };
  };
  // ---- end: the core as the page's source of truth ----

  Module['entropyStudy'] = function (opts) {
    opts = opts === undefined || opts === null ? {} : opts;
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var dks = opts.dks === undefined || opts.dks === null ? [16, 64, 256, 1024] : opts.dks;
    if (!Array.isArray(dks) || dks.length < 1 || dks.length > 16) fail('dks', 'dks must be an array of 1 to 16 widths');
    for (var i = 0; i < dks.length; i++) {
      if (!Number.isInteger(dks[i]) || dks[i] < 1 || dks[i] > 8192) fail('dks', 'every entry of dks must be an integer in 1..8192');
    }
    var o = { dks: dks.slice(), keys: intField(opts, 'keys', 16, 1), queries: intField(opts, 'queries', 1000, 1), seed: seedField(opts) };
    var r = unwrap(coreSession().entropyStudy(o));
    return { dk: r.dk, scaled: r.scaled, unscaled: r.unscaled, ceiling: r.ceiling };
  };
})();

// ---- Bytes moved (core.traffic): the IO model of Dao et al. 2022 for the standard and the
// tiled algorithm (cpp/include/attn/traffic.hpp, docs/js-api.md). Its own block so it merges
// apart from the attention surface above.
(function () {
  var TrafficModel = null, KERNELS = null;
  addOnInit(function () {
    TrafficModel = Module['trafficModel'];
    delete Module['trafficModel'];
    KERNELS = attnNamesOnce().kernel;
  });
  function size(o, name, def) {
    return attnFields.int(o, name, def, 1);
  }
  Module['traffic'] = function (opts) {
    attnFields.options(opts, 'opts');
    var heads = size(opts, 'heads', 1);
    var o = {
      tq: size(opts, 'tq'), tk: size(opts, 'tk'), dk: size(opts, 'dk'), dv: size(opts, 'dv'),
      heads: heads, kvHeads: size(opts, 'kvHeads', heads),
    };
    o.causal = attnFields.bool(opts, 'causal', false);
    var kernel = (o.kernel = attnFields.oneOf(opts, 'kernel', KERNELS, 'naive'));
    // The on-chip memory: required by the tiled algorithm, checked whenever given.
    o.sramBytes = size(opts, 'sramBytes', kernel === 'tiled' ? undefined : 0);
    // The tiled algorithm's outer loop: query blocks (the core's kernel) or key blocks (Algorithm 1).
    o.loopOrder = attnFields.oneOf(opts, 'loopOrder', ['q-outer', 'kv-outer'], 'q-outer');
    var r = attnUnwrap(TrafficModel(o));
    return {
      footprintBytes: r.footprintBytes, slowMemoryBytes: r.slowMemoryBytes,
      loadedBytes: r.loadedBytes, storedBytes: r.storedBytes,
      blockRows: r.blockRows, blockCols: r.blockCols,
    };
  };
})();
