#!/usr/bin/env python3
"""Launch the sweep's configs as concurrent processes (one GPU), then summarize.
Each sweep.py reads build/text-model/ (written by extract.py); results (NAME.jsonl, NAME.log,
summary.json, summary.md) go to --out, by default build/text-model/sweep/.
--local: a tiny two-config CPU smoke test instead of the 15-config sweep."""
import argparse, json, os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(here))
p = argparse.ArgumentParser(); p.add_argument('--out', default=os.path.join(ROOT, 'build', 'text-model', 'sweep')); p.add_argument('--wall', type=float, default=400)
p.add_argument('--local', action='store_true'); a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
base = dict(tok='char', pos='learned', d=128, heads=4, T=128, B=32, lr=3e-3, warmup=0.02, tokens=1.5e8, repeat=0.0)
C = {
 'c-learned':        {},
 'c-rope':           dict(pos='rope'),
 'c-short':          dict(pos='shortformer'),
 'c-learned-rep50':  dict(repeat=0.5),
 'c-rope-rep50':     dict(pos='rope', repeat=0.5),
 'c-short-rep50':    dict(pos='shortformer', repeat=0.5),
 'c-short-rep100':   dict(pos='shortformer', repeat=1.0, tokens=6e7),
 'c-short-lr1e-2':   dict(pos='shortformer', lr=1e-2, warmup=0.05),
 'c-rope-lr1e-2':    dict(pos='rope', lr=1e-2, warmup=0.05),
 'c-short-H2':       dict(pos='shortformer', heads=2),
 'c-short-B128':     dict(pos='shortformer', B=128, lr=6e-3, warmup=0.05),
 'c-short-T256':     dict(pos='shortformer', T=256, B=16),
 'b-learned':        dict(tok='bpe', tokens=1e8),
 'b-short':          dict(tok='bpe', pos='shortformer', tokens=1e8),
 'b-rope-rep50':     dict(tok='bpe', pos='rope', repeat=0.5, tokens=1e8),
}
if a.local:  # tiny smoke test
    C = {'c-short': dict(pos='shortformer', d=32, heads=2, T=32, B=8, tokens=3e4), 'b-learned': dict(tok='bpe', d=32, heads=2, T=32, B=8, tokens=2e4)}
procs = []
for name, o in C.items():
    c = dict(base); c.update(o)
    cmd = [sys.executable, os.path.join(here, 'sweep.py'), '--name', name, '--out', os.path.join(a.out, name + '.jsonl'), '--wall', str(a.wall)]
    for k, v in c.items(): cmd += ['--' + k, str(v)]
    if a.local: cmd += ['--n_evals', '8', '--eval_windows', '64', '--device', 'cpu']
    procs.append((name, subprocess.Popen(cmd, stdout=open(os.path.join(a.out, name + '.log'), 'w'), stderr=subprocess.STDOUT)))
t0 = time.time()
while any(pr.poll() is None for _, pr in procs):
    if time.time() - t0 > a.wall + 90:
        for _, pr in procs:
            if pr.poll() is None: pr.kill()
        break
    time.sleep(2)
print('all done in %.0fs' % (time.time() - t0), [(n, pr.returncode) for n, pr in procs], flush=True)
subprocess.call([sys.executable, os.path.join(here, 'summarize.py'), a.out])
