"""Whether a review candidate says the opposite of its own evidence.

agentao's crystallizer (0.5.17) captures the words *after* a cue: "please never use emojis in
commit messages" gives the candidate "use emojis in commit messages", "永远不要提交 .env" gives
"要提交 .env".  The negation is in the evidence just before the content, and approving saves the
opposite of what the user said.  The rule (linear, fixed patterns only):

1. The content's *core*: its words with a leading negation cue taken off; whether it had one
   is the candidate's polarity.
2. The core is looked up in the evidence (case and spacing folded, ``str.find``); the
   evidence's polarity is whether a cue stands in the few words (Chinese: characters) just
   before it, in the same clause.
3. A paraphrase (core not found): the evidence clause sharing most of the core's words stands
   in, negated when it holds a cue anywhere; the candidate when the content does.

They differ: the warning.  A negation in another clause or too far before is not read.
"""

from __future__ import annotations

import re

from ..findings.checks import token_set

EVIDENCE_CHARS = 4000  # agentao keeps 240; a hand-written row may hold more

# English cues, as whole words (after folding ’ to ' and dropping the
# apostrophe: "don't" -> "dont").  Two-word cues are matched on word pairs.
EN_CUES = frozenset(
    "never not no dont doesnt didnt wont cant cannot shouldnt mustnt wouldnt isnt arent "
    "stop stopped avoid avoiding neither nor none without".split()
)
EN_PAIRS = frozenset(
    tuple(p.split()) for p in "no longer,do not,does not,must not,should not,rather not,no more".split(",")
)
# Chinese cues, found as substrings; the compounds below contain one but negate nothing.
ZH_CUES = tuple(
    "不要 不准 不许 不能 不用 不必 不再 从不 永远不 禁止 避免 停止 切勿 请勿 勿 别 没有 没 无需 不".split()
)
ZH_NOT_NEGATION = tuple(
    "不同 不错 不断 不过 不仅 不少 不久 不管 不论 不但 不如 要不 特别"
    " 区别 分别 类别 级别 识别 告别 别人 别的 性别 个别 差不多 没错".split()
)
WINDOW_WORDS = 3  # English words looked at before the content
WINDOW_CHARS = 4  # Chinese characters looked at before the content

_CLAUSE_END = re.compile(r"[.;!?。；！？，,、\n:：]")
_WORD = re.compile(r"[a-z']++|[\u3400-\u9fff]")  # a Latin word, or one CJK character
_SPACE = re.compile(r"\s++")


def _fold(text: str) -> str:
    return _SPACE.sub(" ", text[:EVIDENCE_CHARS].lower().replace("\u2019", "'")).strip()


def _latin_words(text: str) -> list[str]:
    return [w.replace("'", "") for w in _WORD.findall(text) if w[0] < "\u3400"]


def _en_cue(words: list[str]) -> bool:
    return any(w in EN_CUES for w in words) or any(pair in EN_PAIRS for pair in zip(words, words[1:]))


def _zh_cue(text: str, limit: int | None = None) -> bool:
    """A Chinese cue starting before ``limit`` in ``text`` (all of it when None)."""
    stop = len(text) if limit is None else limit
    for cue in ZH_CUES:
        at = text.find(cue)
        while 0 <= at < stop:
            if not any(
                text.find(c, max(0, at - len(c) + 1), at + len(c)) != -1 for c in ZH_NOT_NEGATION if cue in c
            ):
                return True
            at = text.find(cue, at + 1)
    return False


def negated(text: str) -> bool:
    """Whether ``text`` holds a negation cue anywhere (English words or Chinese)."""
    text = _fold(text)
    return _en_cue(_latin_words(text)) or _zh_cue(text)


def _leading_cue(content: str) -> tuple[bool, str]:
    """(content starts with a cue, the content without it)."""
    words = content.split(" ")
    latin = [w.replace("'", "") for w in words[:2]]
    if latin and latin[0] in EN_CUES:
        return True, " ".join(words[1:])
    if len(latin) == 2 and (latin[0], latin[1]) in EN_PAIRS:
        return True, " ".join(words[2:])
    for cue in ZH_CUES:
        if content.startswith(cue) and not any(content.startswith(c) for c in ZH_NOT_NEGATION):
            return True, content[len(cue) :].lstrip()
    return False, content


def _before(evidence: str, at: int, head: str) -> bool:
    """Whether a cue stands just before ``evidence[at:]`` in the same clause."""
    start = max(0, at - 80)
    clause = evidence[start:at]
    cut = [m.end() for m in _CLAUSE_END.finditer(clause)]
    clause = clause[cut[-1] :] if cut else clause
    words = _latin_words(clause)[-WINDOW_WORDS:]
    if _en_cue(words):
        return True
    cjk = "".join(ch for ch in clause if ch >= "\u3400")[-WINDOW_CHARS:]
    # The content's first characters go along, so that "不" + "同…" reads as 不同.
    return bool(cjk) and _zh_cue(cjk + head[:2], limit=len(cjk))


def _best_clause(evidence: str, core: str) -> str | None:
    wanted = token_set(core)
    if not wanted:
        return None
    best, score = None, 0.5
    for clause in _CLAUSE_END.split(evidence):
        shared = len(wanted & token_set(clause)) / len(wanted)
        if shared >= score:
            best, score = clause, shared
    return best


def contradicts(evidence: str | None, content: str | None) -> bool:
    """Whether ``content`` drops or reverses the negation its ``evidence`` puts on it."""
    ev, text = _fold(evidence or ""), _fold(content or "")
    if not ev or not text:
        return False
    content_neg, core = _leading_cue(text)
    if not core:
        return False
    at = ev.find(core)
    if at != -1:
        # In the evidence the content's own leading cue comes first: look before it.
        return _before(ev, at, core) != content_neg
    clause = _best_clause(ev, core)
    return clause is not None and negated(clause) != negated(text)
