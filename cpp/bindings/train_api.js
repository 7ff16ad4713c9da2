// JavaScript API of the training module (attn_train), appended to the Emscripten glue with
// --post-js (it runs inside the module factory, where `Module` is this instance). It checks
// JavaScript-side types, fills in the documented defaults, calls the Embind handles and
// copies every returned view out of the wasm heap at once. Errors become AttnError with
// .field; the instance keeps working after any of them. Surface: docs/train-api.md.

(function () {
  var DEFAULT_CAP = 512 * 1024 * 1024;
  var MAX_DIM = 0x7fffffff;
  var TrainerClass = null, DecoderClass = null, sampleTokenRaw = null;
  // The names the config's string fields take (task, positional, normalizer, kernel), from the
  // cores' tables (train_bindings.cpp: trainNames), read at start; also tr module.names.
  var NAMES = null;
  addOnInit(function () {
    TrainerClass = Module['TrainerHandle'];
    DecoderClass = Module['DecoderHandle'];
    delete Module['TrainerHandle'];
    delete Module['DecoderHandle'];
    var names = Module['trainNames']();
    delete Module['trainNames'];
    for (var key in names) Object.freeze(names[key]);
    NAMES = Module['names'] = Object.freeze(names);
    // The roles textScores() gives and its threshold (attn/tr/probe.hpp): { names, threshold }.
    var roles = Module['headRoles']();
    delete Module['headRoles'];
    sampleTokenRaw = Module['sampleTokenRaw'];
    delete Module['sampleTokenRaw'];
    Object.freeze(roles.names);
    Module['headRoles'] = Object.freeze(roles);
  });

  var fail = attnFail;  // errors.js
  var unwrap = attnUnwrap;
  // Field checks shared with the core module (fields.js): the same words for the same mistake.
  var isObject = attnFields.isObject;
  function intField(o, name, def, min) {
    return attnFields.int(o, name, def, min);
  }
  var numField = attnFields.num;
  var boolField = attnFields.bool;
  var oneOf = attnFields.oneOf;
  function seedValue(x, name) {
    var o = {};
    o[name] = x;
    return attnFields.seed(o, name);
  }
  // Int32Array, or an array of integers (copied into an Int32Array).
  function int32s(a, name) {
    if (a instanceof Int32Array) return a;
    if (!Array.isArray(a)) fail(name, name + ' must be an Int32Array or an array of integers');
    for (var i = 0; i < a.length; i++) {
      if (!Number.isInteger(a[i]) || a[i] < -2147483648 || a[i] > 2147483647) fail(name, name + '[' + i + '] must be an integer');
    }
    return Int32Array.from(a);
  }
  function uint8s(a, name) {
    if (a instanceof Uint8Array) return a;
    if (!Array.isArray(a)) fail(name, name + ' must be a Uint8Array or an array of 0/1');
    for (var i = 0; i < a.length; i++) {
      if (a[i] !== 0 && a[i] !== 1 && a[i] !== true && a[i] !== false) fail(name, name + '[' + i + '] must be 0 or 1');
    }
    return Uint8Array.from(a, function (x) { return x ? 1 : 0; });
  }
  function copy(a) {
    return a === null || a === undefined ? null : a.slice();
  }

  var CONFIG_KEYS = ['task', 'vocab', 'seqLen', 'layers', 'heads', 'kvHeads', 'dModel', 'positional',
    'layerNorm', 'scale', 'initStd', 'dropout', 'lr', 'beta1', 'beta2', 'eps', 'weightDecay', 'clip',
    'batch', 'seed', 'dataSeed', 'kernel', 'weights', 'memoryCap', 'normalizer', 'qkNorm', 'sigmoidBias'];

  // Shapes of every parameter, in the flat order the core uses.
  function shapes(c) {
    var dh = c.dModel / c.heads;
    // The table P: (T, D) for 'learned' and 'shortformer' (added to the queries' and keys' input).
    var table = c.positional === 'learned' || c.positional === 'shortformer';
    var s = { embed: c.vocab * c.dModel, pos: table ? c.seqLen * c.dModel : 0,
      wq: c.dModel * c.heads * dh, wkv: c.dModel * c.kvHeads * dh, wo: c.heads * dh * c.dModel,
      ln: c.layerNorm ? c.dModel : 0, unembed: c.dModel * c.vocab };
    s.total = s.embed + s.pos + c.layers * (s.wq + 2 * s.wkv + s.wo) + 2 * s.ln + s.unembed;
    return s;
  }

  function part(w, key, n, field) {
    var x = w[key];
    if (n === 0) {
      if (x !== undefined && x !== null) fail(field, field + ' must be null for this config');
      return null;
    }
    if (!(x instanceof Float32Array)) fail(field, field + ' must be a Float32Array of ' + n + ' values');
    if (x.length !== n) fail(field, field + ' has ' + x.length + ' values but this config needs ' + n);
    return x;
  }

  // A tr.weights()-shaped object -> one flat Float32Array in the core's order.
  function flattenWeights(w, c) {
    if (!isObject(w)) fail('weights', 'weights must be null or an object like tr.weights()');
    var s = shapes(c);
    var out = new Float32Array(s.total), off = 0;
    function put(x) {
      if (x) { out.set(x, off); off += x.length; }
    }
    put(part(w, 'embed', s.embed, 'weights.embed'));
    put(part(w, 'pos', s.pos, 'weights.pos'));
    if (!Array.isArray(w.layers) || w.layers.length !== c.layers) fail('weights.layers', 'weights.layers must be an array of ' + c.layers + ' layers');
    for (var l = 0; l < c.layers; l++) {
      var L = w.layers[l], f = 'weights.layers[' + l + ']';
      if (!isObject(L)) fail(f, f + ' must be an object { wq, wk, wv, wo }');
      put(part(L, 'wq', s.wq, f + '.wq'));
      put(part(L, 'wk', s.wkv, f + '.wk'));
      put(part(L, 'wv', s.wkv, f + '.wv'));
      put(part(L, 'wo', s.wo, f + '.wo'));
    }
    put(part(w, 'lnGain', s.ln, 'weights.lnGain'));
    put(part(w, 'lnBias', s.ln, 'weights.lnBias'));
    put(part(w, 'unembed', s.unembed, 'weights.unembed'));
    for (var i = 0; i < out.length; i++) {
      if (!Number.isFinite(out[i])) fail('weights', 'weights must all be finite');
    }
    return out;
  }

  // Flat parameter-shaped vector (weights or gradients) -> the weights() object (copies).
  function unflatten(flat, lay, c) {
    var s = shapes(c);
    function cut(off, n) {
      return n ? flat.slice(off, off + n) : null;
    }
    var layers = [];
    for (var l = 0; l < c.layers; l++) {
      var L = lay.layers[l];
      layers.push({ wq: cut(L.wq, s.wq), wk: cut(L.wk, s.wkv), wv: cut(L.wv, s.wkv), wo: cut(L.wo, s.wo) });
    }
    return { embed: cut(lay.embed, s.embed), pos: cut(lay.pos, s.pos), layers: layers,
      lnGain: cut(lay.lnGain, s.ln), lnBias: cut(lay.lnBias, s.ln), unembed: cut(lay.unembed, s.unembed) };
  }

  function normalise(cfg) {
    if (cfg === undefined || cfg === null) cfg = {};
    if (!isObject(cfg)) fail('config', 'config must be an object');
    for (var key in cfg) {
      if (CONFIG_KEYS.indexOf(key) < 0) fail(key, "unknown config field '" + key + "'");
    }
    var heads = intField(cfg, 'heads', 2, 1);
    var c = {
      task: oneOf(cfg, 'task', NAMES.task, 'induction'),
      vocab: intField(cfg, 'vocab', 32, 1), seqLen: intField(cfg, 'seqLen', 32, 1),
      layers: intField(cfg, 'layers', 2, 1), heads: heads, kvHeads: intField(cfg, 'kvHeads', heads, 1),
      dModel: intField(cfg, 'dModel', 64, 1),
      // true / false: the boolean spelling of 'learned' / 'none' (configs written that way keep working).
      positional: cfg.positional === true ? 'learned' : cfg.positional === false ? 'none'
        : oneOf(cfg, 'positional', NAMES.positional, 'learned'),
      normalizer: oneOf(cfg, 'normalizer', NAMES.normalizer, 'softmax'),
      qkNorm: boolField(cfg, 'qkNorm', false),
      // null: -ln seqLen, the model's context length (the core's default).
      sigmoidBias: numField(cfg, 'sigmoidBias', null),
      layerNorm: boolField(cfg, 'layerNorm', false),
      dropout: attnFields.fraction(cfg, 'dropout'), lr: numField(cfg, 'lr', 1e-2),
      beta1: numField(cfg, 'beta1', 0.9), beta2: numField(cfg, 'beta2', 0.99),
      eps: numField(cfg, 'eps', 1e-8), weightDecay: numField(cfg, 'weightDecay', 0.01),
      clip: numField(cfg, 'clip', 0), batch: intField(cfg, 'batch', 32, 1),
      seed: seedValue(cfg.seed, 'seed'),
      // null: the data streams derive from seed (links and fixtures made before dataSeed keep their bits).
      dataSeed: cfg.dataSeed === undefined || cfg.dataSeed === null ? null : seedValue(cfg.dataSeed, 'dataSeed'),
      kernel: oneOf(cfg, 'kernel', NAMES.kernel, 'naive'),
      memoryCap: attnFields.memoryCap(cfg, DEFAULT_CAP),
      scale: attnFields.scale(cfg),
      initStd: attnFields.positive(cfg, 'initStd', null),
    };
    c.weights = null;
    return c;
  }

  function Decoder(handle, trainer) {
    this._h = handle;
    this._trainer = trainer;
  }
  Decoder.prototype._live = function () {
    if (!this._h) fail('decoder', 'this decoder has been deleted');
    return this._h;
  };
  Decoder.prototype.append = function (token) {
    if (typeof token !== 'number' || !Number.isInteger(token) || Math.abs(token) > MAX_DIM) fail('token', 'token must be an integer (got ' + String(token) + ')');
    var r = unwrap(this._live().append(token));
    // weights is null in state mode: the recurrent state keeps no keys to weigh.
    return { logits: copy(r.logits), weights: copy(r.weights), cacheBytes: r.cacheBytes };
  };
  // Extra: append several tokens without returning anything (recompute mode only stores them).
  Decoder.prototype.prefill = function (tokens) {
    unwrap(this._live().prefill(int32s(tokens, 'tokens')));
  };
  // Extra: layer `layer`'s cached keys and values so far, { k, v: Float32Array(H_kv·t·d_h) }
  // ((H_kv, t, d_h) row-major); throws (field 'cache') for a recompute-mode decoder.
  Decoder.prototype.cache = function (layer) {
    if (typeof layer !== 'number' || !Number.isInteger(layer)) fail('layer', 'layer must be an integer (got ' + String(layer) + ')');
    var r = unwrap(this._live().cache(layer));
    return { k: copy(r.k), v: copy(r.v) };
  };
  // Extra: layer `layer`'s recurrent state { s: Float32Array(H_kv·d_h·d_h), z: Float32Array(H_kv·d_h) }
  // (S = Σ φ(k) vᵀ and z = Σ φ(k) per K/V head); throws (field 'state') unless mode is 'state'.
  Decoder.prototype.state = function (layer) {
    if (typeof layer !== 'number' || !Number.isInteger(layer)) fail('layer', 'layer must be an integer (got ' + String(layer) + ')');
    var r = unwrap(this._live().state(layer));
    return { s: copy(r.s), z: copy(r.z) };
  };
  Decoder.prototype.reset = function () {
    this._live().reset();
  };
  Object.defineProperty(Decoder.prototype, 'length', {
    get: function () { return this._live().length(); },
  });
  // 'recompute', 'cache' (K/V cache) or 'state' (linear attention's recurrent state).
  Object.defineProperty(Decoder.prototype, 'mode', {
    get: function () { return this._live().mode(); },
  });
  Decoder.prototype.delete = function () {
    if (this._h) {
      this._h.delete();
      this._h = null;
    }
  };

  function Trainer(handle, c) {
    this._h = handle;
    this._c = c;
    this._layout = handle.layout();
    this.config = Object.freeze(Object.assign({}, c, { weights: undefined }));
  }
  Trainer.prototype._live = function () {
    if (!this._h) fail('trainer', 'this trainer has been deleted');
    return this._h;
  };
  Trainer.prototype.train = function (n) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 100000) fail('n', 'n must be an integer from 0 to 100000 (got ' + String(n) + ')');
    var r = unwrap(this._live().train(n));
    return { step: r.step, loss: copy(r.loss), gradNorm: copy(r.gradNorm), finite: r.finite };
  };
  Trainer.prototype.evaluate = function (opts) {
    if (opts !== undefined && opts !== null && !isObject(opts)) fail('opts', 'opts must be an object');
    var r = unwrap(this._live().evaluate());
    return { loss: r.loss, accuracy: r.accuracy };
  };
  Trainer.prototype.headScores = function () {
    var r = unwrap(this._live().headScores());
    return { previousToken: copy(r.previousToken), induction: copy(r.induction),
      duplicateToken: copy(r.duplicateToken), ablationLoss: copy(r.ablationLoss),
      kComposition: copy(r.kComposition), loss: r.loss };
  };
  Trainer.prototype.scoreGradients = function () {
    var r = unwrap(this._live().scoreGradients());
    return { scoreGrad: copy(r.scoreGrad), wqGradNorm: copy(r.wqGradNorm), loss: r.loss };
  };
  Trainer.prototype.diagnostics = function () {
    var r = unwrap(this._live().diagnostics());
    return { previousToken: copy(r.previousToken), induction: copy(r.induction),
      duplicateToken: copy(r.duplicateToken), ablationLoss: copy(r.ablationLoss),
      kComposition: copy(r.kComposition), loss: r.loss, accuracy: r.accuracy,
      scoreGrad: copy(r.scoreGrad), wqGradNorm: copy(r.wqGradNorm) };
  };
  // opts.qkv: also each layer's q, k, v as the attention read them (before RoPE or qkNorm):
  // layers: [{ q (H, T, d_h), k (H_kv, T, d_h), v (H_kv, T, d_h) }].
  Trainer.prototype.attention = function (tokens, opts) {
    var t = int32s(tokens, 'tokens');
    if (t.length < 1 || t.length > this._c.seqLen) fail('tokens', 'tokens must hold 1 to seqLen (' + this._c.seqLen + ') values');
    var withQkv = !!(opts && opts.qkv);
    var r = unwrap(this._live().attention(t, withQkv));
    var out = { weights: copy(r.weights), logits: copy(r.logits) };
    if (withQkv) {
      var c = this._c, T = t.length, dh = c.dModel / c.heads, kv = c.kvHeads || c.heads;
      var nq = c.heads * T * dh, nk = kv * T * dh, all = copy(r.qkv), layers = [];
      for (var l = 0, o = 0; l < c.layers; l++, o += nq + 2 * nk)
        layers.push({ q: all.slice(o, o + nq), k: all.slice(o + nq, o + nq + nk), v: all.slice(o + nq + nk, o + nq + 2 * nk) });
      out.layers = layers;
    }
    return out;
  };
  // Per head (index l*H + h) the text scores of attn/tr/probe.hpp on one text (2 to seqLen
  // tokens), with the trainer's ablations: Float64Arrays previous, induction, duplicate, first,
  // and roles (names from headRoles.names).
  Trainer.prototype.textScores = function (tokens) {
    var t = int32s(tokens, 'tokens');
    if (t.length < 2 || t.length > this._c.seqLen) fail('tokens', 'tokens must hold 2 to seqLen (' + this._c.seqLen + ') values');
    var r = unwrap(this._live().textScores(t));
    return { previous: copy(r.previous), induction: copy(r.induction), duplicate: copy(r.duplicate),
      first: copy(r.first), roles: r.roles.slice() };
  };
  // The text model's measures with the trainer's ablations (docs/train-api.md, "The text
  // model's probe"): textLoss(windows) the mean next-token cross-entropy (nats) of W windows of
  // seqLen tokens (row-major); makeProbe(candidates, rows, seed) the probe's (rows, 2n) tokens;
  // probeScores(probe) its inContext (ceSecond - ceFirst) and per head (l*H + h) induction
  // and previous.
  Trainer.prototype.textLoss = function (windows) {
    var w = int32s(windows, 'windows');
    return unwrap(this._live().textLoss(w)).loss;
  };
  Trainer.prototype.makeProbe = function (candidates, rows, seed) {
    var c = int32s(candidates, 'candidates');
    if (!Number.isSafeInteger(rows)) fail('rows', 'rows must be a whole number');
    var s = seedValue(seed, 'seed');
    return copy(unwrap(this._live().makeProbe(c, rows, s)).tokens);
  };
  Trainer.prototype.probeScores = function (probe) {
    var r = unwrap(this._live().probeScores(int32s(probe, 'probe')));
    return { inContext: r.inContext, ceFirst: r.ceFirst, ceSecond: r.ceSecond,
      induction: copy(r.induction), previous: copy(r.previous) };
  };
  Trainer.prototype.sampleBatch = function () {
    var r = unwrap(this._live().sampleBatch());
    return { tokens: copy(r.tokens), lossMask: copy(r.lossMask) };
  };
  Trainer.prototype.lossAndGradients = function (tokens, lossMask) {
    var r = unwrap(this._live().lossAndGradients(int32s(tokens, 'tokens'), uint8s(lossMask, 'lossMask')));
    return { loss: r.loss, grads: unflatten(r.grads, this._layout, this._c) };
  };
  Trainer.prototype.trainOn = function (tokens, lossMask) {
    var r = unwrap(this._live().trainOn(int32s(tokens, 'tokens'), uint8s(lossMask, 'lossMask')));
    return { loss: r.loss, gradNorm: r.gradNorm, finite: r.finite, step: r.step };
  };
  // The shard API (docs/train-api.md, "Training across Workers"): a step's batch is cut into
  // SHARDS fixed shards whose gradients are summed in shard order, whichever Worker made them.
  var SHARDS = 4;
  function liveShards(rows) {
    var out = [];
    for (var s = 0; s < SHARDS; s++) {
      if (Math.floor((s + 1) * rows / SHARDS) > Math.floor(s * rows / SHARDS)) out.push(s);
    }
    return out;
  }
  function count(x, name) {
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 9007199254740991) fail(name, name + ' must be a non-negative integer (got ' + String(x) + ')');
    return x;
  }
  // A nextBatch()-shaped object, checked: { tokens, lossMask, step, targets, rows }.
  function stepBatch(b, c) {
    if (!isObject(b)) fail('batch', 'batch must be an object like tr.nextBatch()');
    if (!(b.tokens instanceof Int32Array)) fail('batch.tokens', 'batch.tokens must be an Int32Array');
    if (!(b.lossMask instanceof Uint8Array)) fail('batch.lossMask', 'batch.lossMask must be a Uint8Array');
    if (b.tokens.length === 0 || b.tokens.length % c.seqLen !== 0) fail('batch.tokens', 'batch.tokens must hold B*seqLen values (seqLen ' + c.seqLen + ')');
    return { tokens: b.tokens, lossMask: b.lossMask, rows: b.tokens.length / c.seqLen,
      step: count(b.step, 'batch.step'), targets: count(b.targets, 'batch.targets') };
  }
  Trainer.prototype.nextBatch = function () {
    var r = unwrap(this._live().nextBatch());
    return { tokens: copy(r.tokens), lossMask: copy(r.lossMask), step: r.step, targets: r.targets };
  };
  // The non-empty shards of a batch, in the order their gradients are summed.
  Trainer.prototype.shards = function (batch) {
    return liveShards(stepBatch(batch, this._c).rows);
  };
  // `into`: a Float32Array of every parameter to copy into instead of a fresh array (a Worker
  // pool recycles them: in Chromium a fresh 150 KiB array costs more than the copy).
  function intoParams(into, total) {
    if (into === undefined || into === null) return null;
    if (!(into instanceof Float32Array) || into.length !== total) fail('into', 'into must be null or a Float32Array of ' + total + ' values');
    return into;
  }
  Trainer.prototype.shardGradient = function (batch, shard, into) {
    var b = stepBatch(batch, this._c);
    if (liveShards(b.rows).indexOf(shard) < 0) fail('shard', 'shard must be one of this batch\'s non-empty shards ' + JSON.stringify(liveShards(b.rows)) + ' (got ' + String(shard) + ')');
    var dst = intoParams(into, this._layout.total);
    var r = unwrap(this._live().shardGradient(b.tokens, b.lossMask, b.step, b.targets, shard));
    // A copy with its own buffer: it can be transferred to another Worker.
    if (dst) dst.set(r.grads);
    return { shard: shard, loss: r.loss, grads: dst || r.grads.slice() };
  };
  // The same gradient kept inside this trainer, not copied out: a result only this trainer's
  // applyGradients takes, for this step (the pool's coordinator keeps its own shards so).
  Trainer.prototype.keepShardGradient = function (batch, shard) {
    var b = stepBatch(batch, this._c);
    if (liveShards(b.rows).indexOf(shard) < 0) fail('shard', 'shard must be one of this batch\'s non-empty shards ' + JSON.stringify(liveShards(b.rows)) + ' (got ' + String(shard) + ')');
    var r = unwrap(this._live().keepShardGradient(b.tokens, b.lossMask, b.step, b.targets, shard));
    return { shard: shard, loss: r.loss, grads: null, kept: true };
  };
  Trainer.prototype.applyGradients = function (batch, results) {
    var b = stepBatch(batch, this._c);
    var live = liveShards(b.rows);
    if (!Array.isArray(results) || results.length !== live.length) fail('shards', 'shards must hold one shardGradient() result per non-empty shard, in shard order (' + live.length + ' here)');
    var total = this._layout.total, grads = [], losses = [];
    for (var i = 0; i < results.length; i++) {
      var x = results[i], f = 'shards[' + i + ']';
      if (!isObject(x)) fail(f, f + ' must be a shardGradient() result');
      if (x.shard !== undefined && x.shard !== live[i]) fail(f, f + ' is shard ' + x.shard + ' but shard ' + live[i] + ' belongs there (results go in shard order)');
      var kept = x.kept === true && x.grads === null;  // the core checks it was kept for this step
      if (!kept && (!(x.grads instanceof Float32Array) || x.grads.length !== total)) fail(f + '.grads', f + '.grads must be a Float32Array of ' + total + ' values (or a keepShardGradient() result)');
      if (typeof x.loss !== 'number') fail(f + '.loss', f + '.loss must be a number');
      grads.push(kept ? null : x.grads);
      losses.push(x.loss);
    }
    var r = unwrap(this._live().applyGradients(b.rows, b.step, b.targets, grads, losses));
    return { loss: r.loss, gradNorm: r.gradNorm, finite: r.finite, step: r.step };
  };
  // Every parameter as one flat Float32Array (a copy, transferable), in the core's order.
  Trainer.prototype.params = function (into) {
    var dst = intoParams(into, this._layout.total);
    var w = this._live().weights();
    if (!dst) return w.slice();
    dst.set(w);
    return dst;
  };
  // A replica's weights (a Worker computing shards for a coordinator); AdamW state untouched.
  Trainer.prototype.setParams = function (flat) {
    if (!(flat instanceof Float32Array) || flat.length !== this._layout.total) fail('weights', 'weights must be a Float32Array of ' + this._layout.total + ' values');
    unwrap(this._live().setParams(flat));
  };
  Trainer.prototype.weights = function () {
    return unflatten(this._live().weights(), this._layout, this._c);
  };
  Trainer.prototype.setLearningRate = function (lr) {
    if (typeof lr !== 'number') fail('lr', 'lr must be a number');
    unwrap(this._live().setLearningRate(lr));
  };
  Trainer.prototype.setAblation = function (layer, head, on) {
    if (!Number.isInteger(layer) || layer < 0 || layer > MAX_DIM) fail('layer', 'layer must be a non-negative integer');
    if (!Number.isInteger(head) || head < 0 || head > MAX_DIM) fail('head', 'head must be a non-negative integer');
    if (typeof on !== 'boolean') fail('on', 'on must be true or false');
    unwrap(this._live().setAblation(layer, head, on));
  };
  Trainer.prototype.decoder = function (opts) {
    if (opts === undefined || opts === null) opts = {};
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var cache = boolField(opts, 'cache', true);
    // state: the recurrent state (normalizer 'linear' only); unset, a cached decoder of a
    // linear model keeps the state and every other model the K/V cache; false keeps the K/V
    // cache for a linear model too.
    var state = boolField(opts, 'state', null);
    if (!cache && state === true) fail('state', 'state: true needs cache: true (the recurrent state is a cache)');
    var mode = !cache ? 'recompute' : state === null ? 'default' : state ? 'state' : 'cache';
    unwrap(this._live().checkDecoder(mode));
    return new Decoder(new DecoderClass(this._live(), mode), this);
  };
  // topK: whole >= 0 (0 = off); topP: in (0, 1] (1 = off).
  function sampleOpts(opts) {
    var topK = intField(opts, 'topK', 0, 0);
    var topP = numField(opts, 'topP', 1);
    if (!(topP > 0 && topP <= 1)) fail('topP', 'topP must be a number with 0 < topP <= 1');
    var temperature = numField(opts, 'temperature', 0);
    if (temperature < 0) fail('temperature', 'temperature must be >= 0');
    return { temperature: temperature, topK: topK, topP: topP };
  }
  Trainer.prototype.generate = function (prompt, n, opts) {
    if (opts === undefined || opts === null) opts = {};
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var p = int32s(prompt, 'prompt');
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_DIM) fail('n', 'n must be a non-negative integer');
    var s = sampleOpts(opts);
    var r = unwrap(this._live().generate(p, n, boolField(opts, 'cache', true), s.temperature, seedValue(opts.seed, 'seed'),
      s.topK, s.topP));
    return { tokens: copy(r.tokens), topIds: copy(r.topIds), topProbs: copy(r.topProbs) };
  };
  // Extra (benchmarks): median ms of forward, forward + backward and optimizer over `reps`
  // steps on one fixed batch; the weights move as in training.
  Trainer.prototype.profile = function (reps) {
    if (!Number.isInteger(reps) || reps < 1 || reps > 10000) fail('reps', 'reps must be an integer in 1..10000');
    var r = unwrap(this._live().profile(reps));
    return { forward: r.forward, forwardBackward: r.forwardBackward, optimizer: r.optimizer };
  };
  Object.defineProperty(Trainer.prototype, 'step', {
    get: function () { return this._live().step(); },
  });
  Trainer.prototype.delete = function () {
    if (this._h) {
      this._h.delete();
      this._h = null;
    }
  };

  Module['AttnError'] = AttnError;
  Module['limits'] = { memoryCap: DEFAULT_CAP };
  Module['SHARDS'] = SHARDS;
  Module['heapBytes'] = function () {
    return wasmMemory.buffer.byteLength;
  };
  // One draw of tr.generate's sampler on given logits with a given uniform u in [0, 1).
  Module['sampleToken'] = function (logits, opts, u) {
    if (!(logits instanceof Float32Array || Array.isArray(logits))) fail('logits', 'logits must be a Float32Array or an array');
    if (opts === undefined || opts === null) opts = {};
    if (!isObject(opts)) fail('opts', 'opts must be an object');
    var s = sampleOpts(opts);
    if (typeof u !== 'number' || !(u >= 0 && u < 1)) fail('u', 'u must be a number with 0 <= u < 1');
    var r = unwrap(sampleTokenRaw(Float32Array.from(logits), s.temperature, s.topK, s.topP, u));
    return { token: r.token, topIds: r.topIds, topProbs: r.topProbs };
  };
  Module['createTrainer'] = function (cfg) {
    var c = normalise(cfg);
    var w = cfg && cfg.weights !== undefined && cfg.weights !== null ? cfg.weights : null;
    var native = Object.assign({}, c);
    if (w !== null) {
      // The shapes come from these fields: the core checks them again, with the same names.
      if (c.dModel % c.heads !== 0) fail('dModel', 'dModel (' + c.dModel + ') must be divisible by heads (' + c.heads + ')');
      if (c.kvHeads > c.heads || c.heads % c.kvHeads !== 0) fail('kvHeads', 'kvHeads (' + c.kvHeads + ') must divide heads (' + c.heads + ')');
      native.weights = flattenWeights(w, c);
    }
    var h = new TrainerClass();
    var r = h.init(native);
    if (!r.ok) {
      h.delete();
      fail(r.field, r.message, r.code);
    }
    return new Trainer(h, c);
  };
})();
