"""Questions about the shipped sample knowledge base, English and Japanese, that tests
comparing two search paths (Edge, local mode, the in-process index) ask both."""

from __future__ import annotations

SAMPLE_QUERIES = [
    "How many vacation days do employees get?",
    "hotel limit per night when travelling",
    "経費精算の締め切りはいつですか",
    "What is the VPN policy?",
    "有給休暇",
]
