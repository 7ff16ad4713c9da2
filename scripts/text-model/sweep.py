#!/usr/bin/env python3
"""2-layer attention-only transformer on SOTU text (exploration only; not shipped).
Model as docs/train-api.md: x0 = E[tok] (+ P[pos] if learned); per layer x += concat_h(softmax attn) W_O,
no MLP, no biases; optional final LayerNorm; logits = y U. Init N(0, 1/D) for every matrix.
Extra positional kinds: 'rope' (pairs (2p,2p+1), pos*10000^(-2p/d_h)) and 'shortformer'
(P added only to the input of W_Q and W_K, in every layer; the residual stream never carries P).
AdamW (0.9, 0.99, eps 1e-8, wd 0.01 on all params), clip 1.0, linear warmup + cosine to lr_min.
Probe: 128 sequences [r, r], n = min(T//2, 50), r uniform over the 1000 most frequent train tokens;
in-context score = mean CE on the second copy minus mean CE on the first.
Reads the token streams and meta.json that extract.py wrote to build/text-model/ (--data);
writes one JSON line per checkpoint to --out (default build/text-model/runs/NAME.jsonl).
Needs only torch + stdlib."""
import argparse, json, math, os, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, 'build', 'text-model')

p = argparse.ArgumentParser()
p.add_argument('--name', default='run'); p.add_argument('--data', default=DATA)
p.add_argument('--tok', default='char'); p.add_argument('--pos', default='learned')  # learned|rope|shortformer|none
p.add_argument('--d', type=int, default=128); p.add_argument('--heads', type=int, default=4); p.add_argument('--layers', type=int, default=2)
p.add_argument('--T', type=int, default=128); p.add_argument('--B', type=int, default=32)
p.add_argument('--lr', type=float, default=3e-3); p.add_argument('--lr_min_frac', type=float, default=0.1)
p.add_argument('--warmup', type=float, default=0.02, help='fraction of steps (<1) or steps (>=1)')
p.add_argument('--sched', default='cosine')  # cosine|const
p.add_argument('--tokens', type=float, default=1e8); p.add_argument('--repeat', type=float, default=0.0)
p.add_argument('--rep_layout', default='var', help="fixed: row=[p,p], p of T/2 (allows a positional shortcut); var: a text window whose last m tokens repeat the m before them, m~U{max(4,T//8)..T//2}")
p.add_argument('--ln', type=int, default=1); p.add_argument('--seed', type=int, default=0)
p.add_argument('--wall', type=float, default=1e9); p.add_argument('--out', default=None, help='default build/text-model/runs/NAME.jsonl')
p.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu'); p.add_argument('--threads', type=int, default=1)
p.add_argument('--n_evals', type=int, default=48); p.add_argument('--eval_windows', type=int, default=256)
a = p.parse_args()
if a.out is None: a.out = os.path.join(DATA, 'runs', a.name + '.jsonl')
os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
torch.set_num_threads(a.threads)
dev = torch.device(a.device)
if dev.type == 'cuda':
    torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = True
meta = json.load(open(os.path.join(a.data, 'meta.json'), encoding='utf-8'))[a.tok]
V = meta['vocab']
def load(fn):
    b = bytearray(open(os.path.join(a.data, fn), 'rb').read())
    return (torch.frombuffer(b, dtype=torch.int16).to(torch.int64) & 0xFFFF).to(dev)
tr_ids, ho_ids = load(a.tok + '_train.u16'), load(a.tok + '_heldout.u16')
T, B, D, H, L = a.T, a.B, a.d, a.heads, a.layers
dh = D // H
g = torch.Generator(device='cpu'); g.manual_seed(a.seed)

class Model(nn.Module):
    def __init__(s):
        super().__init__(); std = 1.0 / math.sqrt(D)
        s.E = nn.Parameter(torch.randn(V, D, generator=g) * std)
        s.P = nn.Parameter(torch.randn(T, D, generator=g) * std) if a.pos in ('learned', 'shortformer') else None
        s.Wq = nn.ParameterList([nn.Parameter(torch.randn(D, D, generator=g) * std) for _ in range(L)])
        s.Wk = nn.ParameterList([nn.Parameter(torch.randn(D, D, generator=g) * std) for _ in range(L)])
        s.Wv = nn.ParameterList([nn.Parameter(torch.randn(D, D, generator=g) * std) for _ in range(L)])
        s.Wo = nn.ParameterList([nn.Parameter(torch.randn(D, D, generator=g) * std) for _ in range(L)])
        s.U = nn.Parameter(torch.randn(D, V, generator=g) * std)
        if a.ln: s.lg = nn.Parameter(torch.ones(D)); s.lb = nn.Parameter(torch.zeros(D))
        if a.pos == 'rope':
            inv = 10000.0 ** (-torch.arange(0, dh, 2, dtype=torch.float32) / dh)
            ang = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
            s.register_buffer('cos', ang.cos()); s.register_buffer('sin', ang.sin())
    def rope(s, x):  # x (B,H,t,dh), rotate interleaved pairs
        t = x.shape[2]; c, sn = s.cos[:t], s.sin[:t]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * c - x1 * sn, x0 * sn + x1 * c), dim=-1).flatten(-2)
    def forward(s, tok, weights=False):
        b, t = tok.shape
        x = s.E[tok]
        if a.pos == 'learned': x = x + s.P[:t]
        ws = []
        for l in range(L):
            qk_in = x + s.P[:t] if a.pos == 'shortformer' else x
            q = (qk_in @ s.Wq[l]).view(b, t, H, dh).transpose(1, 2)
            k = (qk_in @ s.Wk[l]).view(b, t, H, dh).transpose(1, 2)
            v = (x @ s.Wv[l]).view(b, t, H, dh).transpose(1, 2)
            if a.pos == 'rope': q, k = s.rope(q), s.rope(k)
            if weights or not hasattr(F, 'scaled_dot_product_attention'):
                sc = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
                sc = sc.masked_fill(torch.ones(t, t, dtype=torch.bool, device=tok.device).triu(1), float('-inf'))
                w = sc.softmax(-1); o = w @ v
                if weights: ws.append(w)
            else:
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + o.transpose(1, 2).reshape(b, t, D) @ s.Wo[l]
        if a.ln: x = F.layer_norm(x, (D,), s.lg, s.lb, 1e-5)
        return x @ s.U, ws

model = Model().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01)
steps = max(1, int(a.tokens // (B * T)))
warm = int(a.warmup * steps) if a.warmup < 1 else int(a.warmup)
def lr_at(s):
    if s < warm: return a.lr * (s + 1) / warm
    if a.sched == 'const': return a.lr
    pr = (s - warm) / max(1, steps - warm)
    return a.lr * (a.lr_min_frac + (1 - a.lr_min_frac) * 0.5 * (1 + math.cos(math.pi * pr)))

# data
dg = torch.Generator(device='cpu'); dg.manual_seed(1000 + a.seed)
n_rep = int(round(a.repeat * B)); half = T // 2
ar_T = torch.arange(T, device=dev); ar_h = torch.arange(half, device=dev)
def batch():
    off = torch.randint(0, len(tr_ids) - T - 1, (B,), generator=dg).to(dev)
    x = tr_ids[off[:, None] + ar_T]
    if n_rep:
        if a.rep_layout == 'fixed':
            po = torch.randint(0, len(tr_ids) - half - 1, (n_rep,), generator=dg).to(dev)
            pas = tr_ids[po[:, None] + ar_h]
            x[:n_rep, :2 * half] = torch.cat([pas, pas], 1)
        else:
            m = torch.randint(max(4, T // 8), half + 1, (n_rep, 1), generator=dg).to(dev)
            idx = off[:n_rep, None] + ar_T - m * (ar_T >= T - m).long()
            x[:n_rep] = tr_ids[idx]
    return x
# fixed held-out windows and probe
eg = torch.Generator(device='cpu'); eg.manual_seed(12345)
ho_off = torch.randint(0, len(ho_ids) - T - 1, (a.eval_windows,), generator=eg).to(dev)
ho_x = ho_ids[ho_off[:, None] + ar_T]
n = min(T // 2, 50)
top = torch.tensor(meta['top'][:1000], dtype=torch.int64)
r = top[torch.randint(0, len(top), (128, n), generator=eg)].to(dev)
probe = torch.cat([r, r], 1)

@torch.no_grad()
def evaluate():
    model.eval()
    hl = 0.0
    for i in range(0, a.eval_windows, 64):
        xb = ho_x[i:i + 64]; lg, _ = model(xb)
        hl += F.cross_entropy(lg[:, :-1].reshape(-1, V), xb[:, 1:].reshape(-1), reduction='sum').item()
    hl /= a.eval_windows * (T - 1)
    lg, ws = model(probe, weights=True)
    ce = F.cross_entropy(lg[:, :-1].transpose(1, 2), probe[:, 1:], reduction='none')  # (Bp, 2n-1): ce[:, j] = target j+1
    first = ce[:, 0:n - 1].mean().item()            # targets 1..n-1
    second = ce[:, n:2 * n - 1].mean().item()       # targets n+1..2n-1
    i = torch.arange(n, 2 * n, device=dev); j = i - n + 1
    ip = torch.arange(1, 2 * n, device=dev)
    ind = [w[:, :, i, j].mean(dim=(0, 2)).tolist() for w in ws]   # per layer, per head
    prev = [w[:, :, ip, ip - 1].mean(dim=(0, 2)).tolist() for w in ws]
    model.train()
    return dict(heldout=hl, in_context=second - first, ce_first=first, ce_second=second, induction=ind, previous=prev,
                ind_best_L2=max(ind[-1]), prev_best_L1=max(prev[0]))

ev = set([0, steps]) | {int(round(x)) for x in [math.exp(math.log(steps) * k / (a.n_evals // 2)) for k in range(a.n_evals // 2 + 1)]}
ev |= {int(steps * k / (a.n_evals // 2)) for k in range(a.n_evals // 2 + 1)}
ev = sorted(e for e in ev if 0 <= e <= steps)
fo = open(a.out, 'w')
cfg = vars(a).copy(); cfg.update(steps=steps, warmup_steps=warm, vocab=V, bigram=meta['bigram_heldout'],
                                params=sum(q.numel() for q in model.parameters()), torch=torch.__version__)
fo.write(json.dumps({'config': cfg}) + '\n'); fo.flush()
t0 = time.time(); s = 0; cut = False; loss_ema = None
while True:
    if s in ev:
        rr = evaluate(); rr.update(step=s, tokens=s * B * T, wall=time.time() - t0, train_loss=loss_ema, lr=lr_at(min(s, steps - 1)))
        fo.write(json.dumps(rr) + '\n'); fo.flush()
        print(a.name, 's=%d tok=%.2e ho=%.3f ic=%.2f ind=%.2f prev=%.2f %.0fs' % (s, s * B * T, rr['heldout'], rr['in_context'], rr['ind_best_L2'], rr['prev_best_L1'], rr['wall']), flush=True)
    if s >= steps: break
    if time.time() - t0 > a.wall:
        cut = True
        if s not in ev:
            rr = evaluate(); rr.update(step=s, tokens=s * B * T, wall=time.time() - t0, train_loss=loss_ema, lr=lr_at(s))
            fo.write(json.dumps(rr) + '\n')
        break
    for gr in opt.param_groups: gr['lr'] = lr_at(s)
    x = batch()
    lg, _ = model(x)
    loss = F.cross_entropy(lg[:, :-1].reshape(-1, V), x[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True); loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step()
    s += 1
    if s % 200 == 0:
        lv = loss.item(); loss_ema = lv if loss_ema is None else 0.9 * loss_ema + 0.1 * lv
        if not math.isfinite(lv): fo.write(json.dumps({'diverged': True, 'step': s}) + '\n'); break
fo.write(json.dumps({'done': True, 'cut_by_wall': cut, 'steps_done': s, 'tokens_done': s * B * T, 'wall': time.time() - t0,
                     'tok_per_s': s * B * T / max(1e-9, time.time() - t0)}) + '\n'); fo.close()
