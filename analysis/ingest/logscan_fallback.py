"""The text-log scanner in pure Python, for an install without a C compiler.

Line for line what `_logscan.c` does, with the same results (tests/test_logscan_fallback.py holds
them to that): read the C file's header for the forms it reads. It runs at a few MB/s rather than
hundreds, so a log-only diagnosis still works, only slower on big logs.
"""
from __future__ import annotations

import re
from array import array
from collections.abc import Callable

# the scanner's answers from `resolve` besides a family id (>= 0) or -1: a word that opens a section
SECTION_VAL, SECTION_TEST, SECTION_TRAIN = -2, -3, -4
_PREFIX = {SECTION_VAL: b"val|", SECTION_TEST: b"test|"}
MAX_COLUMNS = 64
MAX_WORDS = 4        # the words of a label read before a value; a longer one is prose, its last words tried

# the word between a name and its counter: `Loss at step 5: x`, `Loss for Iter 1: x` (see the C file)
_COUNTER_PREPOSITIONS = (b"at", b"for", b"in", b"of", b"on", b"after")
_START = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_KEYCH = _START | frozenset(b"0123456789./-")
_BLANK = frozenset(b" \t")
_DIGITS = frozenset(b"0123456789")
_WORD = re.compile(rb"[A-Za-z0-9_./-]+")
_MANTISSA = re.compile(rb"(\d*)(?:\.(\d*))?")
_EXPONENT = re.compile(rb"[eE][-+]?\d+")
_MSVC = re.compile(rb"(INF|IND|QNAN|SNAN)\d*")
_SPECIAL = (b"nan", b"NaN", b"NAN", b"inf", b"Inf", b"INF")
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
_CALLEE = re.compile(rb"[A-Za-z0-9_.]*")
FULLWIDTH_COLON = "：".encode()
BOX_BARS = ("│".encode(), "┃".encode())      # a table's column rule drawn in box characters (rich's)
_UNIT = re.compile(rb"/\d+|[A-Za-z%]{0,3}:?")
_NAN = float("nan")
_INF = float("inf")


_GROUPS = re.compile(rb"(?:,\d{3}(?!\d))+")


def _thousands(s: bytes, j: int, num: tuple[float, int]) -> tuple[float, int]:
    """A count printed with thousands separators (`15,234`, `124,439,808`) grown by each `,ddd` group after the
    number at s[j:num[1]] (see the C file)."""
    e = num[1]
    if not 1 <= e - j <= 3 or not s[j:e].isdigit() or s[j] == 48:
        return num
    m = _GROUPS.match(s, e)
    if m is None or s[m.end():m.end() + 1] == b".":
        return num
    return float(s[j:m.end()].replace(b",", b"")), m.end()


def parse_number(s: bytes, i: int) -> tuple[float, int] | None:
    """A number at s[i:] and where it ends: [-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?, nan, inf or
    infinity (not the start of a longer word; YAML's `.nan`), or MSVC's `1.#INF`, `-1.#IND`, `1.#QNAN`, `1.#SNAN`."""
    n, j = len(s), i
    neg = False
    if j < n and s[j] in b"-+":
        neg = s[j] == 45
        j += 1
    if s[j:j + 1] == b"." and s[j + 1:j + 4] in _SPECIAL:      # YAML spells them `.nan`, `.inf`, `-.inf`
        j += 1
    if s[j:j + 3] in _SPECIAL:
        k = j + 3
        if s[j] in b"iI" and s[k:k + 5] in (b"inity", b"INITY"):
            k += 5
        if k < n and s[k] in _KEYCH and s[k] not in b"./-":
            return None
        return (_NAN if s[j] in b"nN" else -_INF if neg else _INF), k
    m = _MANTISSA.match(s, j)
    assert m is not None            # the pattern matches the empty string
    int_digits, frac = m.group(1), m.group(2)
    if not int_digits and not frac:
        return None
    end = m.end()
    if int_digits == b"1" and frac == b"" and s[end:end + 1] == b"#":     # MSVC's `1.#INF00`, `-1.#IND`, `1.#QNAN0`
        w = _MSVC.match(s, end + 1)
        if w is None:
            return None
        return (-_INF if neg else _INF) if w.group(1) == b"INF" else _NAN, w.end()
    e = _EXPONENT.match(s, end)
    if e:
        end = e.end()
    digits = len(int_digits) + len(frac or b"")
    # the C scanner hands anything off its exact fast path to strtod through a 64-byte buffer
    exp10 = -len(frac or b"") + (int(e.group()[1:]) if e else 0)
    if not (digits <= 15 and -22 <= exp10 <= 22) and end - i >= 64:
        return None
    return float(s[i:end]), end


BLANKS, PIPES, COMMAS, WORDS = 0, 1, 2, 3    # how a table's cells are apart (WORDS: names one blank apart)


def _digits_at(s: bytes, i: int, k: int) -> int:
    """The index just past exactly k digits from i, else -1."""
    return i + k if i + k <= len(s) and all(48 <= ch <= 57 for ch in s[i:i + k]) else -1


def _clock_at(s: bytes, i: int) -> int:
    """hh:mm:ss with up to 9 digits of a fraction after `.` or `,`: the index past it, else -1."""
    for part in range(3):
        if part:
            if i >= len(s) or s[i] != 58:
                return -1
            i += 1
        if (i := _digits_at(s, i, 2)) < 0:
            return -1
    if i + 1 < len(s) and s[i] in b".," and 48 <= s[i + 1] <= 57:
        i += 1
        for _ in range(9):
            if i < len(s) and 48 <= s[i] <= 57:
                i += 1
    return i


_LEVELS = (b"INFO", b"WARNING", b"WARN", b"ERROR", b"DEBUG", b"CRITICAL", b"FATAL")


def _stamp_gap(s: bytes, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _BLANK:
        i += 1
    if i < n and (s[i] == 124 or (s[i] == 45 and not (i + 1 < n and (48 <= s[i + 1] <= 57 or s[i + 1] == 46)))):
        i += 1
        while i < n and s[i] in _BLANK:
            i += 1
    return i


def stamp_len(s: bytes) -> int:
    """A logger's stamp in front of a table's line: its length, 0 without one (the C file's stamp_len)."""
    n = len(s)
    if n > 5 and s[0] in b"IWEF" and (j := _digits_at(s, 1, 4)) > 0 and j < n and s[j] == 32 \
            and (j := _clock_at(s, j + 1)) > 0:                                  # glog
        while j < n and s[j] == 32:
            j += 1
        d = j
        while j < n and 48 <= s[j] <= 57:
            j += 1
        if j == d or j >= n or s[j] != 32:
            return 0
        close = s.find(b"]", j)
        return _stamp_gap(s, close + 1) if close >= 0 else 0
    bracket = int(n > 0 and s[0] == 91)
    i = bracket
    if (j := _digits_at(s, i, 4)) > 0 and j < n and s[j] == 45:                     # 2024-03-01 10:22:30
        if (j := _digits_at(s, j + 1, 2)) < 0 or j >= n or s[j] != 45:
            return 0
        if (j := _digits_at(s, j + 1, 2)) < 0 or j >= n or s[j] not in b" T":
            return 0
        if (j := _clock_at(s, j + 1)) < 0:
            return 0
        if j < n and s[j] == 90:
            j += 1
    elif (j := _clock_at(s, i)) < 0:
        return 0
    if bracket:
        if j >= n or s[j] != 93:
            return 0
        j += 1
    i = _stamp_gap(s, j)
    lv = i + (i < n and s[i] == 91)
    for w in _LEVELS:
        if s.startswith(w, lv) and not (lv + len(w) < n and s[lv + len(w)] in _KEYCH):
            lv += len(w)
            lv += lv < n and s[lv] == 93
            lv += lv < n and s[lv] == 58
            return _stamp_gap(s, lv)
    return i


class _Table:
    """A column table: the family of each header cell, and how its cells are apart."""

    def __init__(self, fams: list[int], how: int, lead: int) -> None:
        self.fams, self.how, self.lead = fams, how, lead      # lead: the header's blanks before it
        self.stamped = 0      # the header came after a logger's stamp, so its rows do too


def _comma_value(s: bytes, j: int) -> bool:
    """A comma right after a key, then a number: keras-frcnn's `loss_rpn_cls,0.77,loss_rpn_regr,0.11`, a
    `key, value` pair, a zipped `('loss', 0.35)`."""
    j += 1
    while j < len(s) and s[j] in _BLANK:
        j += 1
    return parse_number(s, j) is not None


def _attached_counter(s: bytes, j: int) -> bool:
    """`Epoch[3]`, `Step[300/1000]`, `Epoch(3)`: a counter right after its name's bracket at s[j], closed
    by the bracket (after an optional `/total`), with no separator after it (`loss[0]: 0.5` is an index)."""
    close = 93 if s[j] == 91 else 41
    num = parse_number(s, j + 1)
    if num is not None and num[1] < len(s) and s[num[1]] == 47:
        num = parse_number(s, num[1] + 1)
    if num is None or num[1] >= len(s) or s[num[1]] != close:
        return False
    end = num[1] + 1
    while end < len(s) and s[end] in _BLANK:
        end += 1
    return not (end < len(s) and s[end] in b":=")


def _batch_counter(s: bytes, k: int) -> tuple[float, float, int] | None:
    """The batch counter right after an epoch's number (see the C file's batch_counter): its position within
    the epoch, its total and where its bracket closes, else None."""
    n = len(s)
    if k < n and s[k] == 47 and (total := parse_number(s, k + 1)) is not None:
        k = total[1]
    if k < n and s[k] in b"])":
        k += 1
    while k < n and s[k] in _BLANK:
        k += 1
    if k >= n or s[k] not in b"[(":
        return None
    close = 93 if s[k] == 91 else 41
    k += 1
    while k < n and s[k] in _BLANK:
        k += 1
    pos = parse_number(s, k) if k < n and 48 <= s[k] <= 57 else None
    if pos is None or pos[1] + 1 >= n or s[pos[1]] != 47 or not 48 <= s[pos[1] + 1] <= 57:
        return None
    total = parse_number(s, pos[1] + 1)
    if total is None or total[0] < pos[0] or total[0] <= 0:
        return None
    k = total[1]
    while k < n and s[k] in _BLANK:
        k += 1
    if k < n and s[k] == 40 and (pct := parse_number(s, k + 1)) is not None and s[pct[1]:pct[1] + 2] == b"%)":
        k = pct[1] + 2
        while k < n and s[k] in _BLANK:
            k += 1
    if k >= n or s[k] != close:
        return None
    return pos[0], total[0], k + 1


def _cells(s: bytes, how: int) -> list[bytes]:
    if how == COMMAS:
        return [c.strip(b" \t") for c in s.strip(b" \t").split(b",")]
    if how == PIPES:
        t = s.strip(b" \t")
        if t.startswith(b"|"):
            t = t[1:]
        return [c.strip(b" \t") for c in re.split(rb"[|\t]", t)]
    return s.split()


def _numeric_cell(c: bytes) -> float | None:
    """A table cell that is a number with at most a unit (`7.17G`, `1/100`, `41%`, `640:`)."""
    if not c:
        return None
    r = parse_number(c, 0)
    if r is None:
        return None
    u = _UNIT.match(c, r[1])
    return r[0] if u is not None and u.end() == len(c) else None


class Scanner:
    def __init__(self, resolve: Callable[[str], int], literals: tuple[bytes, ...], initials: bytes = b"") -> None:
        self.resolve = resolve
        self.initials = frozenset(initials)
        self.literals = tuple(lit for lit in literals[:255] if isinstance(lit, bytes) and len(lit) >= 2)
        self.cache: dict[bytes, int] = {}
        self.cols: dict[int, tuple[array, array, array, array]] = {}
        self.step = self.raw_first = self.raw_last = _NAN
        self.offset = 0.0
        self.raw_total = self.line_total = _NAN   # the total a step was printed out of (`Step [100/600]`): the last
                                                  # step's, the current line's
        self.batch_epoch, self.batch_total, self.batch_base = _NAN, 0.0, 0.0
        self.rows = 0
        self.malformed = 0
        self.table: _Table | None = None

    def family(self, key: bytes) -> int:
        fam = self.cache.get(key)
        if fam is None:
            fam = self.cache[key] = int(self.resolve(key.decode("utf-8", "replace")))
        return fam

    def section_of(self, word: bytes) -> int:
        """The section a lone word opens, or 0 (only words with a section word's initial are asked)."""
        if word[0] not in self.initials:
            return 0
        fam = self.family(word)
        return fam if fam <= SECTION_VAL else 0

    def flush(self, pairs: list[tuple[int, float, int]], ln: int) -> None:
        """The line's step applies to all its pairs; the k-th value of a list is the k-th of as many rows."""
        if not pairs:
            return
        for fam, v, _ in pairs:
            if fam != 0 or v != v or abs(v) == _INF:
                continue
            if self.raw_first != self.raw_first:
                self.raw_first = v
            elif v < self.raw_last:                  # a counter that restarts each epoch: by its total, if printed
                total = self.raw_total
                self.offset += total if total == total and total >= self.raw_last else self.raw_last
            elif v == self.raw_last == self.raw_total == self.line_total:   # once an epoch, at its end: `[100/100]`
                self.offset += v
            self.raw_last = v
            self.raw_total = self.line_total
            self.step = self.offset + v
        span = 1
        for fam, v, idx in pairs:
            if fam == 0:
                continue
            col = self.cols.get(fam)
            if col is None:
                col = self.cols[fam] = (array("i"), array("i"), array("d"), array("d"))
            col[0].append(self.rows + idx)
            col[1].append(ln)
            col[2].append(self.step)
            col[3].append(v)
            span = max(span, idx + 1)
        self.rows += span
        self.line_total = _NAN

    def pairs(self, s: bytes) -> tuple[list[tuple[int, float, int]], bool]:
        """Every `key <sep> number` of a line (the first per family), and whether it is malformed."""
        n = len(s)
        i, prev, bad, section = 0, -1, False, 0
        starts: list[int] = []      # with prev: the starts of the run of words joined by one space
        soft = 0                    # the section a two-word name opened (`val Loss:`), for the bare names after it
        name_cell = False           # the cell before was a name with no number of its own after `|`
        out: list[tuple[int, float, int]] = []
        seen: set[int] = set()
        while i < n:
            m = _WORD.search(s, i)               # the next run of key bytes; anything before it parts words
            if m is None:
                break
            if m.start() != i:
                prev = -1
            ws, i = m.span()
            if s[ws] == 45:      # dashes drawn around a name (`-----loss-----:`, `--LOSS--`) are no part of it
                d = ws
                while d < i and s[d] == 45:
                    d += 1
                framed = i - d >= 2 and s[i - 2:i] == b"--"
                if d < i and s[d] in _START and (d - ws >= 3 or (d - ws == 2 and framed)):
                    ws, prev = d, -1
            # a possessive names the set a metric is of: LightGBM's `valid_0's auc: 0.5`, `training's l2: 0.3`
            if s[ws] in _START and i + 2 < n and s[i:i + 2] == b"'s" and s[i + 2] in _BLANK:
                i += 2
            if s[ws] not in _START:
                prev = -1
                i = self.value_first(s, ws, i, out, seen) or i
                continue
            we = j = i
            if j + 1 < n and s[j] == 40 and s[j + 1] in _START:                  # `Epoch(val) [1]`
                word = _WORD.match(s, j + 1)
                assert word is not None         # s[j + 1] is a word character
                k = word.end()
                if k < n and s[k] == 41:
                    sec = self.section_of(s[j + 1:k])
                    if sec:
                        section, j = sec, k + 1
            quoted = j < n and s[j] in b"'\""
            if quoted:
                j += 1
            b0 = j
            while j < n and s[j] in _BLANK:
                j += 1
            sep = 0
            if s.startswith(FULLWIDTH_COLON, j):                                # `loss：0.5`
                sep = 58
                j += 3
                while j < n and s[j] in _BLANK:
                    j += 1
            elif s.startswith(BOX_BARS, j):          # a table drawn in box characters (Lightning's test results)
                sep = 124
                j += 3
                while j < n and s[j] in _BLANK:
                    j += 1
            elif j < n and s[j] in b"=:|":
                sep = s[j]
                j += 1
                while j < n and s[j] in _BLANK:
                    j += 1
            elif j == b0 and j < n and s[j] == 44 and _comma_value(s, j):     # `loss_rpn_cls,0.77`, `('loss', 0.35)`
                sep = 44
                j += 1
                while j < n and s[j] in _BLANK:
                    j += 1
            elif j == b0 and not (not quoted and j < n and s[j] in b"[(" and _attached_counter(s, j)):
                if j < n and s[j] in b")]" and ws > 0 and s[ws - 1] in b"([":   # `[valid] loss=`
                    section = self.section_of(s[ws:we]) or section
                if j < n and s[j] == 44 and prev >= 0:   # PaddleOCR's evaluation `cur metric, acc: 0.13`
                    section = self.section_of(s[prev:we]) or section
                prev = -1
                name_cell = False
                continue
            # `Epoch [1][50/500]`, `'loss': [0.7, 0.5]`, `Epoch(3)`
            listed = j < n and (s[j] == 91 or (j == b0 and s[j] == 40))
            if listed:
                j += 1
                while j < n and s[j] in _BLANK:
                    j += 1
            # a quoted key's quoted number (`'loss': '0.52'`, PaddleDetection), where the quote closes right after it
            vq = s[j] if not listed and quoted and sep == 58 and j + 1 < n and s[j] in b"'\"" else 0
            if vq:
                j += 1
            num = parse_number(s, j)
            if vq and num is not None and not (num[1] < n and s[num[1]] == vq):
                num = None
            if num is None and not vq and j < n and s[j] in _START:     # a wrapper: `tensor(0.5`, `np.float64(0.5)`
                callee = _CALLEE.match(s, j)
                assert callee is not None       # the pattern matches the empty string
                k = callee.end()
                if k < n and s[k] == 40:
                    j = k + 1
                    if j < n and s[j] == 91:
                        j += 1
                    num = parse_number(s, j)
            if num is not None and sep == 124 and name_cell:
                # a row of a table of names (Lightning's model summary `2 | loss_fn | CrossEntropyLoss | 0 | train`)
                name_cell, i, prev = False, num[1], -1
                continue
            name_cell = False
            if num is not None and sep != 44:
                num = _thousands(s, j, num)
            if num is not None:
                # a label of up to MAX_WORDS words before `:`/`=` (keras-frcnn's `Loss RPN classifier: 0.3`)
                ks = ws if prev < 0 else starts[-(MAX_WORDS - 1):][0] if sep in (58, 61) else prev
                ke, moved = we, False      # Keras' checkpoint `val_loss improved from 0.5 to 0.4` (see the C file)
                if not sep and prev >= 0 and len(starts) >= 2 and s[ws:we] == b"from" and s[prev:ws - 1] == b"improved":
                    after = parse_number(s, num[1] + 4) if s.startswith(b" to ", num[1]) else None
                    if after is not None:
                        ks, ke, moved, num = starts[-MAX_WORDS:][0], prev - 1, True, after
                key = s[ks:ke]
                fam = self.family(_PREFIX[section] + key if section in _PREFIX else key)
                if moved and fam == 0:     # `resumed step from 10 to 20` sets no step
                    fam = -1
                if soft in _PREFIX and not section and prev < 0:     # `val Loss: 0.69 Acc: 0.46`: val's Acc
                    f = self.family(_PREFIX[soft] + key)
                    fam = f if f >= 0 else fam
                if prev >= 0 and ks == prev and fam >= 0 and not section:
                    soft = self.section_of(s[prev:ws - 1]) or soft
                # `Accuracy: 980/10000 (10%)`: a count out of a total is their ratio (`Epoch 3/100` is a counter's)
                if fam > 0 and not moved and num[1] + 1 < n and s[num[1]] == 47 and fam != self.family(b"epoch"):
                    total = parse_number(s, num[1] + 1) if s[j:num[1]].isdigit() else None
                    if total is not None and s[num[1] + 1:total[1]].isdigit() and total[0] >= num[0] and total[0] > 0:
                        num = (num[0] / total[0], total[1])
                # a step out of its total (`Epoch [3/5], Step [200/600]`): what a restart of the counter adds
                if fam == 0 and not moved and num[1] + 1 < n and s[num[1]] == 47 and s[num[1] + 1] in _DIGITS:
                    total = parse_number(s, num[1] + 1)
                    if total is not None and total[0] >= num[0] and total[0] > 0:
                        self.line_total = total[0]
                # `lb=nan`, SB3's `| ep_rew_mean | nan |`, a line that is only `err     nan`: a NaN is news
                # whatever its name, kept from there
                lone = not sep and prev < 0 and not s[:ws].strip(b" \t") and not s[num[1]:].strip(b" \t\r")
                if fam == -1 and (sep in b"=:|" or lone):
                    if num[0] != num[0] or abs(num[0]) == _INF:
                        fam = self.family(b"nonfinite|" + s[ws:we])
                    else:                        # finite again: the model's state was not NaN
                        fam = self.cache.get(b"nonfinite|" + s[ws:we], -1)
                if fam <= SECTION_VAL:
                    section = fam
                    if self.split_accuracy(s, num[1], seen):   # `Epoch: 001/010 | Train: 10.000% | Loss: 2.303`
                        acc = self.family(_PREFIX[fam] + b"acc" if fam in _PREFIX else b"acc")
                        if acc > 0 and acc not in seen:
                            seen.add(acc)
                            out.append((acc, num[0], 0))
                elif fam > 0 and fam in seen and (num[0] != num[0] or abs(num[0]) == _INF):
                    # the same name twice on a line, the second non-finite: it takes the finite one's place
                    at = next((k for k, (f, v, idx) in enumerate(out)
                               if f == fam and idx == 0 and v == v and abs(v) != _INF), None)
                    if at is not None:
                        out[at] = (fam, num[0], 0)
                elif fam >= 0 and fam not in seen:
                    seen.add(fam)
                    out.append((fam, num[0], 0))
                    counting = section not in _PREFIX and soft not in _PREFIX     # not a validation pass's
                    if fam == self.family(b"epoch") and counting and 0 not in seen:
                        counted = _batch_counter(s, num[1])
                        if counted is not None:
                            seen.add(0)
                            out.append((0, self.batch_step(num[0], counted[0], counted[1]), 0))
                            num = (num[0], counted[2])
                    if quoted and sep == 58 and listed:   # Keras' history.history; `lr=[a, b]` is param groups
                        num = self.rest_of_list(s, num, fam, out)
                # a counter inside the label, the value after it: `Loss at step 100 : nan` (see the C file)
                if (not sep and prev >= 0 and len(starts) >= 2 and s[prev:ws - 1] in _COUNTER_PREPOSITIONS
                        and (fam == 0 or fam == self.family(b"epoch"))):
                    num = self.after_counter(s, num, starts[0], prev, section, out, seen)
                i = num[1]
                prev = -1
                continue
            name_cell = sep == 124
            # a set's name before its pairs: `train: loss 0.91 | val: loss 0.95`, `Valid [loss=0.95]`
            if (sep == 58 or listed) and j < n and s[j] in _START:
                section = self.section_of(s[ws:we]) or section
            if sep in b"=:" and (j == n or s[j] in b",;}|") and self.family(s[ws:we]) >= 0:
                bad = True
            two_word = we + 1 < n and s[we] == 32 and s[we + 1] in _START
            if not two_word and (sep == 124 or j == n):                      # `| valid | epoch 2`
                section = self.section_of(s[ws:we]) or section
            if prev >= 0:                              # `Test net output #0: accuracy = 0.9`
                section = self.section_of(s[prev:ws - 1]) or section
            if two_word:
                if prev < 0:
                    starts = []
                starts.append(ws)
                del starts[:-MAX_WORDS]                # the C scanner's ring: the last MAX_WORDS starts
            prev = ws if two_word else -1
            if two_word:
                i = we + 1
        return out, bad

    def after_counter(self, s: bytes, num: tuple[float, int], ns: int, at: int, section: int, out: list,
                      seen: set[int]) -> tuple[float, int]:
        """After `<name> at step N`: ` : value`, the value of the name s[ns:at - 1]; the counter's number
        moved past it (or unchanged)."""
        n, k = len(s), num[1]
        while k < n and s[k] in _BLANK:
            k += 1
        if not (ns < at and k < n and s[k] in b":="):
            return num
        k += 1
        while k < n and s[k] in _BLANK:
            k += 1
        val = parse_number(s, k)
        if val is None:
            return num
        key = s[ns:at - 1]
        fam = self.family(_PREFIX[section] + key if section in _PREFIX else key)
        if fam > 0 and fam not in seen:
            seen.add(fam)
            out.append((fam, val[0], 0))
        return num[0], val[1]

    def batch_step(self, epoch: float, pos: float, total: float) -> float:
        """The step of an epoch's batch counter (see the C file's batch_step)."""
        if self.batch_epoch != self.batch_epoch or epoch < self.batch_epoch:
            self.batch_base = (epoch - 1) * total if epoch >= 2 else 0.0
        elif epoch > self.batch_epoch:
            self.batch_base += self.batch_total
        self.batch_epoch, self.batch_total = epoch, total
        return self.batch_base + pos

    def split_accuracy(self, s: bytes, end: int, seen: set[int]) -> bool:
        """A section word's number is its accuracy where it is a percentage on a line that counts epochs or
        steps: a data split is announced once, without a counter, and tqdm's `Train:  45%|###` is progress."""
        if not s.startswith(b"%", end) or s.startswith(b"|", end + 1):
            return False
        return 0 in seen or self.family(b"epoch") in seen

    def value_first(self, s: bytes, ws: int, we: int, out: list, seen: set[int]) -> int:
        """Darknet's `519.720886 avg loss, 0.001000 rate`: a number over the whole word at ws..we, one
        space, a name of one or two words, then a comma or the line's end. Where the name ends, or 0."""
        num = parse_number(s, ws)
        n = len(s)
        if num is None or num[1] < we:
            return 0
        end = num[1]
        if end + 1 >= n or s[end] != 32 or s[end + 1] not in _START:
            return 0
        word = _WORD.match(s, end + 1)
        assert word is not None         # s[end + 1] is a word character
        ks, ke = word.span()
        if ke + 1 < n and s[ke] == 32 and s[ke + 1] in _START:                 # `avg loss`
            second = _WORD.match(s, ke + 1)
            assert second is not None
            if second.end() == n or s[second.end()] == 44:
                ke = second.end()
        if ke < n and s[ke] != 44:
            return 0
        fam = self.family(s[ks:ke])
        if fam < 1 or fam in seen:
            return 0
        seen.add(fam)
        out.append((fam, num[0], 0))
        return ke

    @staticmethod
    def rest_of_list(s: bytes, num: tuple[float, int], fam: int, out: list) -> tuple[float, int]:
        """The values after the first of `[a, b, c]`, each with its index; the last one read."""
        n, idx = len(s), 1
        while True:
            k = num[1]
            while k < n and s[k] in _BLANK:
                k += 1
            if k == n or s[k] != 44:
                return num
            k += 1
            while k < n and s[k] in _BLANK:
                k += 1
            nxt = parse_number(s, k)
            if nxt is None:
                return num
            out.append((fam, nxt[0], idx))
            num, idx = nxt, idx + 1

    def table_row(self, s: bytes) -> list[tuple[int, float, int]]:
        t = self.table
        assert t is not None            # called only while a table's header is known
        cells = _cells(s, t.how)
        # pandas prints a frame's index under the blanks its header starts with: that cell is no column
        if t.how in (BLANKS, WORDS) and len(cells) == len(t.fams) + 1 and s.find(cells[0]) + len(cells[0]) <= t.lead:
            cells = cells[1:]
        if t.how == WORDS and len(cells) != len(t.fams):     # names one blank apart: rows of exactly as many cells
            return []
        cells = cells[:len(t.fams)]
        values = [_numeric_cell(c) for c in cells]
        if not values or values[0] is None or sum(v is not None for v in values) < max(2, (len(t.fams) + 1) // 2):
            return []
        out, seen = [], set()
        for fam, v in zip(t.fams, values):
            if v is not None and fam >= 0 and fam not in seen:
                seen.add(fam)
                out.append((fam, v, 0))
        return out

    def header(self, s: bytes) -> _Table | None:
        """A table's header row: three or more names apart by `|`, tabs, commas (a CSV's, one word each) or
        two spaces, two of them metrics, or just two that are both metrics (a pandas frame of `loss` and
        `accuracy`); or three or more names one blank apart, half of them metrics."""
        how = PIPES if b"|" in s or b"\t" in s else COMMAS if b"," in s else BLANKS
        cells = _cells(s, how) if how != BLANKS else re.split(rb"[ \t]{2,}", s.strip(b" \t"))
        if how == BLANKS and len(cells) == 1:
            how, cells = WORDS, s.split()
        if how != BLANKS and cells and not cells[-1]:
            cells.pop()
        if not 2 <= len(cells) <= MAX_COLUMNS or (len(cells) == 2 and how == WORDS):
            return None
        fams = []
        for i, c in enumerate(cells):
            if not c and how == COMMAS and i == 0:       # pandas' `to_csv`: the index
                fams.append(-1)
                continue
            if not c or c[0] not in _START or any(ch not in _KEYCH and ch != 32 for ch in c) or b"  " in c:
                return None
            if how == COMMAS and 32 in c:
                return None
            fam = self.family(b"col|" + c)
            fams.append(fam if fam >= 0 else -1)
        known = sum(f >= 0 for f in fams)
        if known < 2 or (how == WORDS and known < (len(fams) + 1) // 2):
            return None
        return _Table(fams, how, len(s) - len(s.lstrip(b" \t")))

    def line(self, s: bytes, ln: int) -> None:
        found, bad = self.pairs(s)
        self.malformed += bad
        if found:
            self.table = None
        else:
            k = stamp_len(s)
            if self.table is not None and (found := self.table_row(s[k * self.table.stamped:])):
                pass
            elif s[k:].strip(b" \t") and (table := self.header(s[k:])):
                self.table, table.stamped = table, int(k > 0)
        self.flush(found, ln)


def clean(raw: bytes) -> tuple[bytes, bool]:
    """The last state of a `\\r` (or CloudWatch `#015`) rewrite, without ANSI colour or a Markdown quote's marker;
    and whether it had a `\\r`."""
    cr = b"\r" in raw
    if cr:
        raw = raw.rstrip(b"\r")
        raw = raw[raw.rfind(b"\r") + 1:]
    if b"#015" in raw:              # CloudWatch writes a `\r` as `#015` (SageMaker logs)
        while raw.endswith(b"#015"):
            raw = raw[:-4]
        at = raw.rfind(b"#015")
        raw = raw[at + 4:] if at >= 0 else raw
    if b"\x1b" in raw:
        raw = _ANSI.sub(b"", raw)
    for _ in range(2):              # a Markdown quote's marker: a table's header and rows start after it
        if raw[:2] not in (b"> ", b">\t"):
            break
        raw = raw[2:]
    return raw, cr


def _near_literals(data: bytes, literals: tuple[bytes, ...]) -> set[int]:
    """The start of every line whose bytes hold a literal: one search per literal over the chunk,
    not one per line (a line that cleaning changed is checked as cleaned anyway)."""
    starts = set()
    for lit in literals:
        at = data.find(lit)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            starts.add(start)
            nl = data.find(b"\n", at)
            at = data.find(lit, nl) if nl >= 0 else -1
    return starts


def scan(chunk, resolve: Callable[[str], int], literals: tuple[bytes, ...], section_initials: bytes = b""):
    """Same signature and result as `_logscan.scan` (see its docstring)."""
    data = bytes(chunk)
    sc = Scanner(resolve, literals, section_initials)
    hits = array("q")
    has_cr = False
    pos = 0
    lines = data.split(b"\n")
    near = _near_literals(data, sc.literals)
    for ln, raw in enumerate(lines):
        s, cr = clean(raw)
        has_cr |= cr
        sc.line(s, ln)
        if (pos in near or s is not raw) and any(lit in s for lit in sc.literals):
            hits.extend((ln, pos))
        pos += len(raw) + 1
    columns = [(fam, c[0].tobytes(), c[1].tobytes(), c[2].tobytes(), c[3].tobytes())
               for fam, c in sorted(sc.cols.items())]
    return len(lines), sc.rows, columns, hits.tobytes(), sc.malformed, sc.step, sc.raw_first, sc.raw_last, int(has_cr)
