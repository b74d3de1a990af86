"""Check digits, masking and text signatures the finding rules lean on.

Pure helpers, no patterns of their own: Luhn for card numbers, ISO 7064
MOD 11-2 for the 18-digit PRC resident ID, ISO 13616 mod-97 for IBANs,
the token sets used to compare memories with one another, and the keyed
signatures that let a re-check look for flagged text without keeping it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterator
from datetime import date
from operator import add

from ..engine.render import escape

# ---------------------------------------------------------------------------
# Check digits
# ---------------------------------------------------------------------------


def luhn_ok(digits: str) -> bool:
    """True when a string of digits passes the Luhn (mod 10) check."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = ord(ch) - 48
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
# First two digits of a PRC administrative division code (provinces, SARs, Taiwan).
_ID_PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 "
    "61 62 63 64 65 71 81 82 83 91".split()
)


def prc_id_ok(number: str) -> bool:
    """True for an 18-character PRC resident ID with a real province, a valid
    birth date (1900..2100) and a correct ISO 7064 MOD 11-2 check character."""
    if len(number) != 18 or not number[:17].isdigit() or number[:2] not in _ID_PROVINCES:
        return False
    try:
        born = date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    if not 1900 <= born.year <= 2100:
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == number[17].upper()


# ISO 13616 lengths of the countries people here are likely to bank in.
IBAN_LENGTHS = {
    "AD": 24,
    "AE": 23,
    "AT": 20,
    "BE": 16,
    "BG": 22,
    "BH": 22,
    "BR": 29,
    "CH": 21,
    "CY": 28,
    "CZ": 24,
    "DE": 22,
    "DK": 18,
    "EE": 20,
    "ES": 24,
    "FI": 18,
    "FR": 27,
    "GB": 22,
    "GR": 27,
    "HR": 21,
    "HU": 28,
    "IE": 22,
    "IL": 23,
    "IS": 26,
    "IT": 27,
    "LI": 21,
    "LT": 20,
    "LU": 20,
    "LV": 21,
    "MC": 27,
    "MT": 31,
    "NL": 18,
    "NO": 15,
    "PL": 28,
    "PT": 25,
    "QA": 29,
    "RO": 24,
    "SA": 24,
    "SE": 24,
    "SI": 19,
    "SK": 24,
    "SM": 27,
    "TR": 26,
    "UA": 29,
}


def iban_ok(compact: str) -> bool:
    """True for an IBAN (no spaces) of a known country, its length, and mod 97 == 1."""
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


# ---------------------------------------------------------------------------
# Masking: what the page and the JSON twin may show of a sensitive span
# ---------------------------------------------------------------------------
_LABEL = re.compile(r"^(.*?(?:[:=：]|\bis\b|\bbearer\b|为|是)[\s\"']*)", re.I | re.S)


MASK_MARKS = 24  # at most this many "•" stand for a secret's hidden characters, then "…"


def mask_secret(span: str) -> str:
    """Keep a recognisable head (a label such as ``password=`` or a token prefix
    such as ``ghp_``), at most 4 characters of the value, and a "•" for each character
    hidden (at most ``MASK_MARKS``, then "…"): marks, like the other masks, so the excerpt
    reads the same on a page in any language.

    Never returns more than a quarter of the secret value itself.
    """
    label = ""
    m = _LABEL.match(span)
    if m and len(m.group(1)) < len(span) and len(m.group(1)) <= 40:
        label, span = m.group(1), span[len(m.group(1)) :]
    keep = min(4, len(span) // 4)
    hidden = len(span) - keep
    return f"{label}{span[:keep]}{'•' * min(hidden, MASK_MARKS)}{'…' if hidden > MASK_MARKS else ''}"


def mask_digits(span: str) -> str:
    """Replace every digit/letter but the last four with ``•`` (separators stay)."""
    alnum = [i for i, ch in enumerate(span) if ch.isalnum()]
    hide = set(alnum[:-4])
    return "".join("•" if i in hide else ch for i, ch in enumerate(span))


def mask_email(span: str) -> str:
    """``alice.smith@corp.com`` -> ``a•••@corp.com``: the domain says enough."""
    local, _, domain = span.partition("@")
    return f"{local[:1]}•••@{domain}"


# ---------------------------------------------------------------------------
# Signatures for comparing memories
# ---------------------------------------------------------------------------
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff]+")


def token_set(text: str) -> frozenset[str]:
    """Lower-cased ASCII word runs plus CJK character bigrams (single CJK chars
    when a run has only one), so Chinese and English compare the same way."""
    low = text.lower()
    if low.isascii():
        return frozenset(_ASCII_WORD.findall(low))
    out: set[str] = set()
    for run in _WORD.findall(low):
        if run[0] < "\u3400":
            out.add(run)
        else:
            out.update(_cjk_tokens(run))
    return frozenset(out)


def _cjk_tokens(run: str):
    # A run of CJK characters: its bigrams, in order, or the character alone.
    return map(add, run, run[1:]) if len(run) > 1 else (run,)


# ASCII letters lower-cased, digits kept, every other ASCII character a space:
# ``str.split`` then yields exactly ``_ASCII_WORD``'s tokens.  NUL stays, to
# separate texts joined for one pass (when a text holds one, each goes alone).
_ASCII_WORDS = {c: (c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() else 32) for c in range(1, 128)}
# Everything but CJK characters and NUL, to leave each text's CJK runs.
_NOT_CJK = re.compile(r"[^\u3400-\u4dbf\u4e00-\u9fff\0]+")


def token_sets(texts: list[str]) -> list[frozenset[str]]:
    """``token_set`` of each text: the ASCII ones in one pass over their join, the others in another."""
    out: list[frozenset[str] | None] = [None] * len(texts)
    plain = list(map(str.isascii, texts))
    for ascii_only, tokenise in ((True, _ascii_sets), (False, _mixed_sets)):
        rows = [i for i, p in enumerate(plain) if p is ascii_only]
        joined = "\0".join(texts[i] for i in rows)
        if rows and joined.count("\0") == len(rows) - 1:
            for i, tokens in zip(rows, tokenise(joined)):
                out[i] = tokens
    return [tokens if tokens is not None else token_set(texts[i]) for i, tokens in enumerate(out)]


def _ascii_sets(joined: str) -> Iterator[frozenset[str]]:
    # translate + split run in C; a regex findall per text cost three times as much.
    return map(frozenset, map(str.split, joined.translate(_ASCII_WORDS).split("\0")))


def _mixed_sets(joined: str) -> Iterator[frozenset[str]]:
    # As token_set, with the per-text work done once over the join: lower-casing,
    # the ASCII words (each other character made "?", a length-keeping step, then
    # the ASCII pass) and the CJK runs; only the bigrams are made run by run.
    low = joined.lower()
    words = low.encode("ascii", "replace").decode("ascii").translate(_ASCII_WORDS)
    for tokens, runs in zip(map(str.split, words.split("\0")), _NOT_CJK.sub(" ", low).split("\0")):
        found = set(tokens)
        for run in runs.split():
            found.update(_cjk_tokens(run))
        yield frozenset(found)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0 for two empty sets."""
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


# ---------------------------------------------------------------------------
# Signatures of flagged text: found again in a prompt block, never kept
# ---------------------------------------------------------------------------
# One key per process, drawn at start: a signature in a link means nothing to
# anyone without it, and nothing once the dashboard restarts.  (A plain hash of
# a phone number or a short password could be reversed by trying them all.)
# The signer tag says which process made a signature, so that one from before
# a restart is told apart instead of silently never matching.
_SIGNING_KEY = os.urandom(32)
_SIGNER = os.urandom(4).hex()
_SIGNATURE = re.compile(r"([0-9a-f]{8})\.([1-9][0-9]{0,5})\.([0-9a-f]{32})")


def _digest(text: str) -> str:
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=16, key=_SIGNING_KEY
    ).hexdigest()


def text_signature(text: str) -> str:
    """``<signer>.<length>.<keyed digest>`` of ``text`` as a prompt block would show it (escaped)."""
    shown = escape(text)
    return f"{_SIGNER}.{len(shown)}.{_digest(shown)}"


def valid_signature(signature: str) -> bool:
    """Whether ``signature`` has the form ``text_signature`` gives, made here or not."""
    return _SIGNATURE.fullmatch(signature) is not None


def signed_here(signature: str) -> bool:
    """Whether this process made ``signature`` (a dashboard restart draws a new key)."""
    m = _SIGNATURE.fullmatch(signature)
    return m is not None and m.group(1) == _SIGNER


def signature_in(block: str, signature: str) -> bool:
    """Whether the text behind ``signature`` (``signed_here``) appears anywhere in ``block``."""
    _signer, length, digest = _SIGNATURE.fullmatch(signature).groups()
    n = int(length)
    return any(hmac.compare_digest(_digest(block[i : i + n]), digest) for i in range(len(block) - n + 1))
