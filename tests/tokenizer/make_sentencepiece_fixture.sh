#!/usr/bin/env bash
# Writes sentencepiece/tokenizer.model (a tiny Llama-style BPE model: byte
# fallback, BOS 1, EOS 2, unk 0) trained by Debian's spm_train on the text
# below, and sentencepiece/expected.tsv: each sample and the ids spm_encode
# gives it (without BOS; the loader adds it as transformers' slow tokenizer
# does). Llama's settings: no normalization (identity), a dummy prefix
# space. Then the same for sentencepiece-nfkc/: a unigram model with
# SentencePiece's default normalization rules (nmt_nfkc, a precompiled
# charsmap of about 240 KB, as T5 and ALBERT ship). Run from anywhere; needs
# the `sentencepiece` package.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$here/sentencepiece
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/train.txt" <<'TEXT'
In the beginning was the Word, and the Word was with God, and the Word was God.
The quick brown fox jumps over the lazy dog. The lazy dog sleeps in the sun.
Attention is all you need: queries, keys and values, scores and weights.
A transformer reads every token and writes what it found into the residual stream.
Les élèves lisent à la bibliothèque; über Straßen fahren Autos. 東京 タワー
Numbers like 3.14159 and 2026 appear too, with tabs	and   runs of spaces.
TEXT
spm_train --input="$work/train.txt" --model_prefix="$work/m" --vocab_size=420 --hard_vocab_limit=false --model_type=bpe \
  --byte_fallback=true --character_coverage=1.0 --normalization_rule_name=identity --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 \
  --minloglevel=2 >/dev/null 2>&1
# write_expected MODEL_DIR SAMPLE…: each sample (base64) and spm_encode's ids.
write_expected() {
  local dir=$1 s ids
  shift
  : >"$dir/expected.tsv"
  for s in "$@"; do
    ids=$(printf '%s' "$s" | spm_encode --model="$dir/tokenizer.model" --output_format=id | tr ' ' ',')
    printf '%s\t%s\n' "$(printf '%s' "$s" | base64 -w0)" "$ids" >>"$dir/expected.tsv"
  done
  echo "wrote $dir/tokenizer.model ($(stat -c %s "$dir/tokenizer.model") bytes) and expected.tsv"
}
mkdir -p "$out"
cp "$work/m.model" "$out/tokenizer.model"
write_expected "$out" \
  "The quick brown fox" \
  "attention is all you need" \
  "Straßen und Autos in Tōkyō 東京" \
  "emoji 🙂 falls back to bytes" \
  "  leading spaces and trailing  "

nfkc=$here/sentencepiece-nfkc
spm_train --input="$work/train.txt" --model_prefix="$work/n" --vocab_size=200 --hard_vocab_limit=false --model_type=unigram \
  --normalization_rule_name=nmt_nfkc --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 --minloglevel=2 >/dev/null 2>&1
mkdir -p "$nfkc"
cp "$work/n.model" "$nfkc/tokenizer.model"
write_expected "$nfkc" \
  "ｆｕｌｌ width ½ ﬁ café" \
  "The  quick   brown fox" \
  "東京 ① naïve Straße" \
  "Ⅻ ㍿ ﬀ ℡"
