"""Rows of bare numbers in a pasted log: a CSV or whitespace table printed without its header
(timm's summary rows `209,nan,4.16,7.72,24.0`), or the list a Keras `train_on_batch` returns printed
as `17.269388197455335 0.5`. The C scanner reads `key <sep> number` pairs and finds none in them.
Two readings name their columns, and nothing beyond them is guessed:
- a first column that counts up by whole numbers at every row is the row's step; the other columns
  are metrics whose names were not printed (`column_2`...), enough to see one turn NaN;
- a row whose values are, to the printed precision, those of one named line of the same log
  (`loss: 17.2694 - acc.: 0.5000`) takes that line's names, and so does the run of rows around it:
  the rows of its width that follow one another with only named lines between them (one loop's
  output). Rows of the same width elsewhere (`224 224`, an image size) are another loop's;
- the longest run of rows that neither counts nor names, TABLE_ROWS or more, is read by place only where a
  column turned NaN or Inf and stayed so (a print loop's `-1.13727e+19 0 nan`), or blew up a million-fold to
  HUGE (`print(loss.item())` at `1.3e9`, ... `2.9e28`): enough to see it turn. A number alone on its line is
  such a row of one cell, and NumPy's arrays printed side by side (`[ -1.06e+12] [ -3.75e+10]`) one of
  several. A file read whole (a headerless CSV: data, whose missing values are no run's) is not.
A table needs TABLE_ROWS rows, and a counted one COUNTED_ROWS rows (TABLE_ROWS where its counter starts
above 1: a paste cut from a run's table) and a column with a fraction in it (or printed with a point,
`1.0`): a block of whole numbers
is a confusion matrix or a shape, a few rows numbered from 0 or 1 a per-class listing, not a table of
metrics. Only files up to BARE_MAX_BYTES are read again for them: pasted excerpts and
summaries; a trainer's long log names what it prints. A headerless CSV is read whole, up to CELLS_MAX
numbers, and no line longer than LINE_MAX is matched (the row regex stays linear in a line).
"""
from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.budget import DEFAULT
from analysis.ingest.dressing import undress
from analysis.metrics import Series
from analysis.names import canonical, known_names

BARE_MAX_BYTES = 1 << 20
LINE_MAX = 4096                # a longer line is no row of metrics: not matched at all
CELLS_MAX = DEFAULT.artifact_bytes // 64    # cells kept of a headerless CSV: 8 bytes each, far under the budget
TABLE_ROWS = 3
PLACED_TAIL = 2                # rows non-finite to the last in a column read by place (all, in a shorter one)
HUGE = 1e10                    # a printed value this large is a float (`-1.04449e+19`), whole or not: no count
EXPLODE_FACTOR, EXPLODE_SHARE = 1e6, 0.75   # a column read by place that grew a million-fold, at 3 rows in 4
COUNTED_ROWS = 5               # a counted table: a run of steps, not a short per-class listing
NAMING_TRIES = 4               # rows of a run tried against the named lines of its width...
NAMING_RUNS = 64               # ...in its first 64 runs: a log of more loops names what it prints
UNNAMED = "column_"            # the prefix of a metric whose name the table did not print
AGREE_REL = 5e-4               # printed to 3 decimals or more (`2.303`, Keras' `17.2694`): within half a 3rd place
_CELL = r"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|nan|NaN|NAN|inf|Inf|INF)"
# the last cell may carry a duration's unit: nolearn's table ends each row with its `dur` (`419.85s`)
_ROW = re.compile(rf"^\s*{_CELL}(?:(?:\s*,\s*|\s+){_CELL})+(?P<unit>m?s)?\s*(?:,\s*)?$")
_SPLIT = re.compile(r"\s*,\s*|\s+")
# a number alone on its line: `print(loss.item())` in a loop (read by place only, below)
_LONE = re.compile(rf"^\s*{_CELL}\s*$")
# NumPy's print of small arrays side by side (`print(w, b)` of two 1-element arrays: `[ -1.06e+12] [ -3.75e+10]`,
# then `[ nan] [ nan]`): the brackets dropped, a row of bare numbers
_BRACKETED = re.compile(rf"^\s*(?:\[\s*{_CELL}(?:\s+{_CELL}){{0,7}}\s*\]\s*){{1,8}}$")
# `print(loss)` of a scalar tensor autograd made: `tensor(2.3026, device='cuda:0', grad_fn=<NllLossBackward0>)`
# (fastai prints the loss it computed as a bare `TensorBase(5.7082e+08)`)
_PRINTED_TENSOR = re.compile(rf"^\s*(?:tensor\(\s*({_CELL})\s*"
                             r"(?:,\s*device='[\w:]{1,16}')?,\s*grad_fn=<\w{1,64}>\)"
                             rf"|TensorBase\(\s*({_CELL})\s*\))\s*$")
PRINTED_LOSS = "train_loss"
# pycocotools' summary: ` Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.372` (and
# IoU=0.50): the detector's mAP and mAP50, one report per evaluation
_COCO_AP = re.compile(r"^\s*Average Precision\s+\(AP\) @\[ IoU=(0\.50:0\.95|0\.50)\s+\| area=\s*all \| "
                      r"maxDets=100 \] = (-?\d+(?:\.\d+)?)\s*$")
_COCO_NAMES = {"0.50:0.95": "map", "0.50": "map50"}
# py-faster-rcnn's VOC evaluation (`voc_eval.py`): `Mean AP = 0.7012` after one `AP for <class> = ...` per class,
# the mAP at IoU 0.5
_VOC_MAP = re.compile(r"^\s*Mean AP = (\d+(?:\.\d+)?)\s*$")
# YOLO's (v5 to v11) validation summary: a header naming P, R, mAP50 and mAP50-95 (its progress bar after it), then
# the row of all classes, `all  5000  36335  0.603  0.861  0.829  0.574`
_YOLO_VAL_HEADER = re.compile(r"^\s*Class\s+Images\s+(?:Targets|Labels|Instances)\s+(?:Box\()?P\s+R\s+"
                              r"mAP(?:@\.5|@0\.5|50)\s+mAP(?:@\.5:\.95|@0\.5:0\.95|50-95)")
_YOLO_ALL = re.compile(r"^\s*all\s+\d+(?:\.\d+)?(?:e\+?\d+)?\s+\d+(?:\.\d+)?(?:e\+?\d+)?" + r"\s+([-+.\de]+|nan)" * 4
                       + r"(?:\s+[-+.\de]+|\s+nan){0,4}\s*$", re.I)     # a segmentation's or pose model's Mask(...)
_YOLO_NAMES = ("map50", "map")       # of the Box group: P and R, a detector's, are no classifier's to read
# a segmentation evaluation's mean IoU printed alone: `Mean iou =  0.0464`, `mIoU:  3.46 total_data: 135` (a
# percentage), semseg's `Eval result: mIoU/mAcc/allAcc 0.0038/0.0150/0.0069.`
_SEG_MIOU = re.compile(r"^\s*(?:Eval result:\s{0,4})?(?:mean[ _]?iou|miou)(?:/\w{1,12}){0,4}\s{0,8}[:=]?\s{0,8}"
                       r"(\d{1,3}(?:\.\d{1,20})?)(?=[/\s.,]|$)", re.I)
SEG_MIOU = "miou"
# a printed tensor's row (`tensor([[nan, nan,  ..., nan],`, numpy's `[nan nan nan]`): its cells, read
# below; one that shows NaN and nothing finite holds no numbers, whatever tensor it is
_TENSOR_ROW = re.compile(r"^\s*(?:tensor\(|array\()?\[+(?P<cells>[^\[\]()]{1,4000})")
_COUNT_CELL = re.compile(r"\d{1,9}:")
# a row of numbers after a count, as printed (an index per class, or a print loop's step)
_COUNTED_ROW = re.compile(r"^\s*(\d{1,9}):[ \t]+((?:[-+]?(?:\d[\d.]*(?:e[-+]?\d+)?|nan|inf)(?:[ \t]+|$))+)$", re.I)
_NONFINITE_CELLS = {"nan", "-nan", "+nan", "inf", "-inf", "+inf"}
PRINTED_NAN = "printed_tensor"
PRINTED_ROW = "printed_row"       # a logger's row of comma-separated cells, NaN after its count
# a line that is a non-finite value and nothing else: `print(loss.item())` (or Lua's `print(err)`) of a NaN
# (or a scalar tensor so printed with no grad_fn: `print(loss)` under no_grad gives `tensor(nan, device='cuda:0')`)
_BARE_NONFINITE = re.compile(r"^[ \t]*(?:tensor\()?([-+]?(?:nan|inf))(?:,[ \t]*device='[\w:]{1,16}')?\)?[ \t]*$", re.I)
PRINTED_VALUE = "printed_value"
# a logger's message that is a list of numbers and nothing else: VITS and its forks log `[loss_disc,
# loss_gen, loss_fm, loss_mel, loss_dur, loss_kl, global_step, lr]` so (`... INFO [nan, nan, 1.35, 0, 0.0002]`)
PRINTED_LIST = "printed_list"
_LOGGED_LIST = re.compile(rf"(?:^|\b(?:INFO|DEBUG)[\s:|-]{{1,4}}(?:[\w.-]{{1,40}}[\s:|-]{{1,4}})?)"
                          rf"\[\s*({_CELL}(?:\s*,\s*{_CELL}){{2,63}})\s*\]\s*$")
# an exception's line: a tensor printed after one belongs to its message (torch.distributions' `found
# invalid values:`), which the error readings read with the error
_RAISED = re.compile(rb"^\s*(?:\[[^\]]{0,40}\]:?\s*)?[\w.]{0,100}(?:Error|Exception)\b[^:\n]{0,40}:")
# a line that is one name and one non-finite value (Lua Torch's `err     nan`) behind a paste's prefix
# (`[2024-03-01 10:22:42] err     nan`): the log scanner reads the bare line, not the dressed one
# a value printed under its name with the step in brackets (`train_batch_loss[ 6590 ]:  nan`): the scanner
# reads `loss[0]: 0.5` as an index into a list and keeps nothing; read here, the bracket as the step, at
# INDEXED_ROWS lines or more of one known name, or at any line where it is NaN or Inf
_INDEXED = re.compile(r"^[ \t]*([A-Za-z_][\w.]{0,63})\[[ \t]*(\d{1,12})[ \t]*\][ \t]*[:=][ \t]*"
                      r"([-+]?(?:\d{1,20}(?:\.\d{0,20})?(?:[eE][-+]?\d{1,3})?|nan|inf))[ \t]*$", re.I)
INDEXED_ROWS = 3
_LONE_PAIR = re.compile(r"^[ \t]*([A-Za-z_][\w.]{0,64})[ \t]+([-+]?(?:nan|inf))[ \t]*$", re.I)
# a metric under a Chinese trainer's word for it (`[验证集] 准确率为 0.17`, `训练损失：0.52`), which the scanner,
# reading ASCII keys, passes over: the split is the nearest of 训练/验证/测试 before it on the line
# (精确度 is precision, and 混合精度/半精度 a precision setting; each optional part takes its own spaces, so that a
# run of spaces is split one way only)
_ZH_METRIC = re.compile(rf"(损失值?|准确率|正确率|学习率|(?<!混合)(?<![半单双])精度(?!训练))[ \t]*(?:(?:为|是)[ \t]*)?"
                        rf"(?:[:：=][ \t]*)?({_CELL})(?![\w.])")
_ZH_KIND = {"损失": "loss", "损失值": "loss", "准确率": "acc", "正确率": "acc", "精度": "acc", "学习率": "lr"}
# a top-k accuracy under `@k` (timm's and DeiT's `Acc@1 81.2 Acc@5 95.5`, the ImageNet example's `Prec@1`), which
# the scanner's names (letters, digits, `_./-`) do not take
_NUM = r"[-+]?(?:\d{1,12}(?:\.\d{0,12})?|\.\d{1,12})(?:[eE][-+]?\d{1,3})?"
# (the running average in brackets after a batch's value is what the line says of the whole: `Acc@1 41.02 ( 66.12)`)
_AT_K = re.compile(rf"(?<![\w@])((?:val_|test_|eval_)?)(?:acc|top|prec|(precision) ?)@ ?(1|5|10)\b[ \t]*[:=]?[ \t]*"
                   rf"({_NUM})(?![\w.])"
                   rf"(?:[ \t]*\([ \t]*({_NUM})[ \t]*\))?", re.I)
# an evaluation's line: a split's word before its first `@k` (`Test: [ 10/196]`, Swin's `INFO Test:`, `| val Acc@1`), or
# the ` * Acc@1 ...` summary the ImageNet example and DeiT print; TensorFlow's cifar10/inception evaluation scripts
# print `precision @ 1 = 0.862` and nothing else (a training script never does)
_EVAL_LINE = re.compile(r"(?:^|[\s|:\]-])(?:\*[ \t]|(?:test|val|valid|validation|eval|evaluation)\b)", re.I)
_ZH_BEST = re.compile(r"最佳|最好|最优|最高|最低|最小|最大")     # a best-so-far, not the report's own value
_ZH_SPLIT = re.compile(r"训练|验证|测试")
_ZH_SPLITS = {"训练": "train", "验证": "val", "测试": "test"}
# a loss's non-finite value ending a line under a name dressed past what the scanner reads as a key (GluonTS's
# `#test_score (local, wQuantileLoss[0.1]): inf`): the word holding `loss` names it
# (a name ending in `loss`, not `loss_scale`; not a best-so-far, whose first value is inf by design; read where two
# lines or more print one: an early stopper's one `val_loss: inf` is its starting point)
_DRESSED_LOSS = re.compile(r"(?<![A-Za-z_])((?!(?i:best|min|max|lowest|prev))[A-Za-z_]{0,40}loss)(?![A-Za-z_])"
                           r"[^\s:=]{0,20}[ \t]*[:=][ \t]*([-+]?(?:nan|inf))[ \t]*$", re.I)
DRESSED_REPEATS = 2         # lines such a loss must be read from, all names together


@dataclass
class BareTable:
    names: list[str]          # one per column; "" for the counter
    lines: np.ndarray         # 1-based line of each row
    cells: np.ndarray         # rows x columns, float64
    counted: bool             # the first column is the step (or, `placed`, the rows are counted by place)
    placed: bool = False      # no counter: each row's step is its place in the table


@dataclass
class BareRows:
    by_width: dict[int, tuple[np.ndarray, np.ndarray]]   # width -> (1-based lines, rows x width cells)
    others: np.ndarray        # lines neither blank nor a bare row (not kept for a CSV read whole)
    cut: bool                 # CELLS_MAX reached: the rows after it are not read
    dotted: dict[int, np.ndarray]   # width -> whether each row prints a cell after its first with a point (`1.0`)


_CELL_ONLY = re.compile(rf"\s{{0,8}}{_CELL}\s{{0,8}}")
TAIL_CELLS = 3


def _comma_tail(text: str) -> str:
    """The comma-separated cells that end a line after a prefix of words (a CSV-style logger's
    `INFO:name, 2022-03-11 09:36:30,690, epoch, 0089, 0.127450, 0.018011, 0.002422`): TAIL_CELLS or more,
    read as a row; '' where the line does not end so."""
    parts = text.rstrip().rstrip(",").split(",")
    k = len(parts)
    while k > 0 and _CELL_ONLY.fullmatch(parts[k - 1]):
        k -= 1
    if k == 0 or len(parts) - k < TAIL_CELLS:
        return ""
    return ",".join(parts[k:]).strip()


def bare_rows(path: Path, whole: bool = False) -> BareRows:
    """The rows of bare numbers of a small file (any file when `whole`: a CSV known to have no
    header), by width, streamed into arrays."""
    lines: dict[int, array] = {}
    cells: dict[int, array] = {}
    dotted: dict[int, array] = {}
    others = array("q")
    kept, cut = 0, False
    if whole or path.stat().st_size <= BARE_MAX_BYTES:
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                text = undress(raw.decode("utf-8", "replace").rstrip("\r\n").rsplit("\r", 1)[-1])
                if not text.strip():
                    continue
                if "[" in text and len(raw) <= LINE_MAX and _BRACKETED.match(text):
                    text = text.replace("[", " ").replace("]", " ")
                m = (_ROW.match(text) or (None if whole else _LONE.match(text))) if len(raw) <= LINE_MAX else None
                if m is None and not whole and len(raw) <= LINE_MAX and (tail := _comma_tail(text)):
                    text, m = tail, _ROW.match(tail)
                if m is None:
                    if not whole:
                        others.append(n)
                    continue
                if m.re is _ROW and m.group("unit"):
                    text = text[:m.start("unit")] + text[m.end("unit"):]
                texts = [c for c in _SPLIT.split(text.strip().rstrip(",").strip()) if c]
                values = [float(c) for c in texts]
                kept += len(values)
                if whole and kept > CELLS_MAX:
                    cut = True
                    break
                lines.setdefault(len(values), array("q")).append(n)
                cells.setdefault(len(values), array("d")).extend(values)
                dotted.setdefault(len(values), array("b")).append(any("." in c for c in texts[1:]))
    by_width = {w: (np.frombuffer(lines[w], dtype=np.int64).copy(),
                    np.frombuffer(cells[w], dtype=np.float64).reshape(-1, w).copy()) for w in lines}
    return BareRows(by_width, np.frombuffer(others, dtype=np.int64).copy(), cut,
                    {w: np.frombuffer(dotted[w], dtype=np.int8).astype(bool) for w in dotted})


def _turns(col: np.ndarray, tail: int = PLACED_TAIL) -> bool:
    """Whether a column read by place went non-finite and stayed so: finite rows (or none), then `tail`
    non-finite rows or more to the last, with no non-finite cell among the finite ones (a value left out
    between finite ones is a missing value, not a run gone NaN)."""
    finite = np.isfinite(col)
    k = int(np.argmin(finite)) if not finite.all() else len(col)     # the first non-finite row
    return len(col) - k >= min(tail, len(col)) and not finite[k:].any()


def explodes(col: np.ndarray) -> bool:
    """Whether a column read by place blew up: finite, its size growing at EXPLODE_SHARE of its rows or more,
    from its first row to EXPLODE_FACTOR times that or more, ending at HUGE or past it (`1.3e9`, `1.8e11`, ...
    `2.9e28`: a loss or a weight printed each step under updates that overshoot)."""
    a = np.abs(col)
    if len(a) < TABLE_ROWS or not np.isfinite(a).all() or a[0] <= 0 or a[-1] < HUGE:
        return False
    return bool(a[-1] >= EXPLODE_FACTOR * a[0] and (np.diff(a) > 0).mean() >= EXPLODE_SHARE)


def _counter(cells: np.ndarray) -> bool:
    """Whether the first column counts steps: whole, rising, and below HUGE in size (HTSL's `-1.80037e+19`, then
    `-1.29962e+19` rises in whole floats, and is a value that blew up)."""
    first = cells[:, 0]
    return bool(np.isfinite(first).all() and np.all(first == np.round(first)) and np.all(np.diff(first) >= 1)
                and np.abs(first).max() < HUGE)


def _tolerance(w: float) -> float:
    """How far a full-precision value may sit from `w` as printed: AGREE_REL of it, and at least one
    unit of its last printed place (3 decimals or finer: a float keeps no trailing zeros)."""
    if not np.isfinite(w):
        return -1.0                 # a NaN or Inf names nothing
    text = np.format_float_positional(w, trim="-")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return max(AGREE_REL * abs(w), 10.0 ** -max(decimals, 3))


@dataclass
class _Named:
    """The named lines of one width that print the same names."""
    keys: list[str]
    values: np.ndarray        # lines x keys
    tolerance: np.ndarray     # lines x keys

    def near(self, values: np.ndarray) -> np.ndarray:
        """The lines a row can match: its cells, each within tolerance of a key of its own, sum to
        within the tolerances' sum of the line's (a bound in lines x keys, before the full test)."""
        return np.flatnonzero(np.abs(values.sum() - self.values.sum(axis=1)) <= self.tolerance.sum(axis=1))


def _named_lines(named: dict[int, dict[str, float]]) -> dict[int, list[_Named]]:
    """The named lines by width, grouped by their names."""
    groups: dict[tuple[str, ...], list[list[float]]] = {}
    for fields in named.values():
        groups.setdefault(tuple(fields), []).append(list(fields.values()))
    out: dict[int, list[_Named]] = {}
    for keys, rows in groups.items():
        values = np.array(rows, dtype=np.float64)
        tolerance = np.vectorize(_tolerance, otypes=[np.float64])(values)
        out.setdefault(len(keys), []).append(_Named(list(keys), values, tolerance))
    return out


def _named_by(values: np.ndarray, named: list[_Named]) -> list[str] | None:
    """The names of the one named line (of the row's width) whose values these are, each cell
    matching one name only."""
    found = None
    for g in named:
        near = g.near(values)
        close = np.abs(values[None, :, None] - g.values[near, None, :]) <= g.tolerance[near, None, :]  # line, cell, key
        key_of = close.argmax(axis=2)[(close.sum(axis=2) == 1).all(axis=1)]
        key_of = key_of[(np.diff(np.sort(key_of, axis=1), axis=1) != 0).all(axis=1)]   # a key for one cell only
        for reading in {tuple(r) for r in key_of.tolist()}:
            names = [g.keys[k] for k in reading]
            if found is not None and found != names:
                return None            # two named lines read the row two ways: no reading
            found = names
    return found


def _plausible(names: list[str], cells: np.ndarray) -> bool:
    """Values a metric of that name can take: an accuracy is a share or a percentage."""
    for j, name in enumerate(names):
        col = cells[:, j][np.isfinite(cells[:, j])]
        if "acc" in name and len(col) and (col.min() < 0 or col.max() > 100):
            return False
    return True


def bare_tables(path: Path, series: list[Series], whole: bool = False) -> tuple[list[BareTable], bool]:
    """The tables of bare rows a small log holds, named by a counter or by a named line, and whether
    the rows were cut at CELLS_MAX."""
    rows = bare_rows(path, whole)
    if not rows.by_width:           # a long log is not read for rows (BARE_MAX_BYTES): nothing to name
        return [], rows.cut
    named: dict[int, dict[str, float]] = {}
    for s in series:          # the values of each named line
        if s.lines is not None and s.name not in ("step", "epoch"):
            for line, v in zip(s.lines.tolist(), s.values.tolist()):
                named.setdefault(line, {})[s.name] = v
    by_width = _named_lines(named)
    named_lines = np.fromiter(named, dtype=np.int64, count=len(named))
    # what ends a loop's run of rows: any other line but a named one, and a row of another width
    stops = np.union1d(np.setdiff1d(rows.others, named_lines),
                       np.concatenate([ln for ln, _ in rows.by_width.values()] or [np.zeros(0, np.int64)]))
    tables: list[BareTable] = []
    for width, (lines, cells) in rows.by_width.items():
        ends = np.setdiff1d(stops, lines)
        keep = ~np.isin(lines, named_lines)
        lines, cells, dots = lines[keep], cells[keep], rows.dotted[width][keep]
        if len(lines) < TABLE_ROWS:
            continue
        run_of = np.searchsorted(ends, lines)        # rows with no end between them share a run
        left = np.ones(len(lines), dtype=bool)
        for run in np.unique(run_of)[:NAMING_RUNS] if width in by_width and width > 1 else []:
            at = np.flatnonzero(run_of == run)
            names = next((m for i in at[:NAMING_TRIES]
                          if (m := _named_by(cells[i], by_width[width])) is not None), None)
            if names is not None and len(at) >= TABLE_ROWS and _plausible(names, cells[at]):
                tables.append(BareTable(names, lines[at], cells[at], False))
                left[at] = False
        lines, cells, dots = lines[left], cells[left], dots[left]
        # a value with a fraction, or printed with a point (`1.0`): a float metric, not a count or a shape
        fraction = bool(np.any(np.isfinite(cells) & (cells != np.round(cells)))) or bool(dots.any())
        # a listing per class counts from 0 or 1; a few rows cut from a run's table start where the paste did
        enough = len(lines) >= COUNTED_ROWS or (len(lines) >= TABLE_ROWS and len(cells) and cells[0, 0] > 1)
        k = sum(t.counted for t in tables)      # a second table's columns are its own
        tag = f"_table{k + 1}" if k else ""
        if width > 1 and enough and _counter(cells) and fraction:
            tables.append(BareTable([""] + [f"{UNNAMED}{j + 1}{tag}" for j in range(1, width)], lines, cells, True))
        elif not whole and len(lines) >= TABLE_ROWS and not _counter(cells) and (
                fraction or float(np.abs(cells[np.isfinite(cells)]).max(initial=0.0)) >= HUGE):
            # (rows that count from 0 or 1 too few to be a run's are a listing per class: not read by place either;
            # nor a data file read whole, whose missing values are no run's)
            run_of = np.searchsorted(ends, lines)     # the longest run of rows with no other line between them
            at = np.flatnonzero(run_of == np.bincount(run_of).argmax())
            # (beside a value at HUGE, one non-finite row at the end is enough: the run had diverged before it)
            tail = 1 if float(np.abs(cells[at][np.isfinite(cells[at])]).max(initial=0.0)) >= HUGE else PLACED_TAIL
            if len(at) >= TABLE_ROWS and any(_turns(cells[at, j], tail) or explodes(cells[at, j])
                                             for j in range(width)):
                tables.append(BareTable([f"{UNNAMED}{j + 1}{tag}" for j in range(width)], lines[at], cells[at], True,
                                        placed=True))
    return tables, rows.cut


def with_bare_tables(path: Path, series: list[Series], artifact: str, whole: bool = False,
                     notes: list[str] | None = None) -> list[Series]:
    """The series of a log with its bare rows read in: a named row joins its names' series in line
    order (by place among the metric lines where the log has no step, at the last step before it
    where it has), a counted table adds its unnamed columns at their counter's steps. A CSV read
    whole past CELLS_MAX says so in `notes`."""
    tables, cut = bare_tables(path, series, whole)
    if cut and notes is not None:
        notes.append(f"{artifact}: only its first {CELLS_MAX:,} numbers are read")
    if not tables:
        return series
    by_name = {s.name: s for s in series}
    index = all(s.step_kind == "index" for s in series)
    for t in (t for t in tables if not t.counted):
        for j, name in enumerate(t.names):
            have = by_name[name]
            steps = (np.zeros(len(t.lines)) if index else
                     np.asarray([_step_before(have, n) for n in t.lines.tolist()], dtype=np.float64))
            own = have.lines if have.lines is not None else np.zeros(len(have), np.int64)
            lines = np.concatenate([own, t.lines])
            order = (np.argsort(lines, kind="stable") if index
                     else np.lexsort((lines, np.concatenate([have.steps, steps]))))
            by_name[name] = Series(name, have.artifact, np.concatenate([have.steps, steps])[order],
                                   np.concatenate([have.values, t.cells[:, j]])[order], lines[order],
                                   have.step_kind, have.stride)
    out = list(by_name.values())
    if index and any(not t.counted for t in tables):   # its place among the lines that print a metric
        places = np.unique(np.concatenate([s.lines for s in out if s.lines is not None]))
        out = [Series(s.name, s.artifact, np.searchsorted(places, s.lines).astype(np.float64), s.values, s.lines,
                      "index", s.stride) if s.lines is not None else s for s in out]
    for t in (t for t in tables if t.counted):
        steps = np.arange(len(t.lines), dtype=np.float64) if t.placed else t.cells[:, 0].copy()
        out += [Series(name, artifact, steps, t.cells[:, j].copy(), t.lines, "index" if t.placed else "step")
                for j, name in enumerate(t.names) if name]
    return out


def _step_before(s: Series, line: int) -> float:
    if s.lines is None or not len(s):
        return 0.0
    earlier = np.flatnonzero(s.lines < line)
    return float(s.steps[earlier[-1]] if len(earlier) else s.steps[0])


class _Listing:
    """The `N: v v` rows of a file, as far as telling a listing per class (`0: 0.912 0.954`, `1: 0.734 0.846`,
    `2: nan nan`, a class the split lacks: indices one apart, a finite row among them) from a print loop's steps
    (`0: inf nan`, `10: nan nan`; one whose rows are all NaN has no finite row to be a listing of) needs: the
    lines of its non-finite rows only, so a long log costs no memory per row."""

    def __init__(self) -> None:
        self.nonfinite: set[int] = set()
        self.finite = self.apart_by_one = False
        self._last: int | None = None

    def add(self, line: int, count: int, cells: str) -> None:
        if {c.lstrip("+-") for c in cells.lower().split()} & {"nan", "inf"}:
            self.nonfinite.add(line)
        else:
            self.finite = True
        self.apart_by_one = self.apart_by_one or (self._last is not None and count - self._last == 1)
        self._last = count

    def per_class(self) -> bool:
        return self.finite and self.apart_by_one


def _row_cells(text: str) -> list[str]:
    """The cells of a printed tensor's row, bracketed or not (PyTorch 0.3's `Variable containing:` block
    prints `    nan     nan     nan`), lower-cased; [] where the line is no such row of non-finite cells."""
    bare = text.lower().split()
    if bare and _COUNT_CELL.fullmatch(bare[0]):
        bare = bare[1:]        # a print loop's `10: nan nan` (its step, then the values it printed)
    if len(bare) >= 2 and set(bare) <= _NONFINITE_CELLS:
        return bare
    m = _TENSOR_ROW.match(text)
    if m is None:
        return []
    cells = [c for c in re.split(r"[,\s]+", m.group("cells").lower()) if c and c != "..."]
    return cells if len(cells) >= 2 and set(cells) <= _NONFINITE_CELLS else []


def _vits_losses(cells: str) -> bool:
    """Whether a logged list is VITS's `[*losses, global_step, lr]` with a NaN or an Inf among the losses: its
    last two cells a whole step and an LR in (0, 1); a per-class score list (`[0.912, nan, 0.853]`, a class
    absent from the split) is not one."""
    c = [x.strip().lower() for x in cells.split(",")]
    try:
        step, lr = float(c[-2]), float(c[-1])
    except ValueError:
        return False
    return (len(c) >= 4 and c[-2].lstrip("+").isdigit() and 0 < lr < 1 and math.isfinite(step)
            and bool({x.lstrip("+-") for x in c[:-2]} & {"nan", "inf"}))


def _nan_row(text: str) -> bool:
    return "nan" in {c.lstrip("+-") for c in _row_cells(text)}


def _comma_cells(text: str) -> list[str]:
    """The comma-separated cells ending a line (`_comma_tail`) after a leading count, lower-cased; [] where
    the line does not end so."""
    cells = [c.strip().lower() for c in _comma_tail(text).split(",") if c.strip()]
    return cells[1:] if cells and cells[0].isdigit() else cells


def _nonfinite_only(cells: list[str]) -> list[str]:
    return cells if len(cells) >= 2 and set(cells) <= _NONFINITE_CELLS else []


def _comma_nan_cells(text: str) -> list[str]:
    """The cells of a logger's comma-separated row that are non-finite after a leading count (PointNetLK's
    `..., epoch, 0198, nan, nan, nan, nan`): a row too short a paste to make a table of; [] where a finite
    value is among them."""
    return _nonfinite_only(_comma_cells(text))


def masked_row(text: str) -> bool:
    """A printed row that is -inf in every cell: a row masked out whole (every key of a query hidden)."""
    cells = _row_cells(text)
    return bool(cells) and set(cells) == {"-inf"}


def _zh_metrics(text: str) -> list[tuple[str, float]]:
    """The (canonical name, value) of each metric a line prints under a Chinese word for it."""
    if text.isascii():
        return []
    out: dict[str, float] = {}
    split, start = "train", 0
    for m in _ZH_METRIC.finditer(text):
        before = text[start:m.start()]
        said = _ZH_SPLIT.findall(before)
        split = _ZH_SPLITS[said[-1]] if said else split
        start = m.end()
        kind, cell = _ZH_KIND[m.group(1)], m.group(2)
        if kind == "acc" and "." not in cell and float(cell) > 1:
            continue                # `精度 = 16`: a precision in bits, not an accuracy
        if not _ZH_BEST.search(before[-4:]):
            out.setdefault("lr" if kind == "lr" else f"{split}_{kind}", float(cell))   # a line's first of a name
    return list(out.items())


def _at_k_metrics(text: str) -> list[tuple[str, float]]:
    """The (canonical name, value) of each top-k accuracy a line prints as `Acc@k` (a line's first of each)."""
    if "@" not in text:
        return []
    out: dict[str, float] = {}
    first = _AT_K.search(text)
    held = "val_" if first is not None and (first.group(2) or _EVAL_LINE.search(text, 0, first.start())) else ""
    for m in _AT_K.finditer(text):
        out.setdefault(canonical(f"{m.group(1).lower() or held}acc@{m.group(3)}"), float(m.group(5) or m.group(4)))
    return list(out.items())


def _without_lines(s: Series, lines: set[int]) -> Series | None:
    """`s` without its reports on `lines` (None where none is left)."""
    if s.lines is None or not np.isin(s.lines, list(lines)).any():
        return s
    keep = ~np.isin(s.lines, list(lines))
    return s.take(keep) if keep.any() else None


def with_printed_values(path: Path, series: list[Series], artifact: str, prefix: str) -> list[Series]:
    """What a small log prints that no name of the scanner's holds, read in one pass:
    - pycocotools' summary lines of mAP (IoU 0.50:0.95) and mAP50, py-faster-rcnn's VOC `Mean AP`, and YOLO's
      validation row of all classes (its box mAP50 and mAP50-95) under its header, where no name of the scanner's
      holds them (what the scanner read on that header is its progress bar, dropped);
    - lines that print a scalar tensor with a `grad_fn` and nothing else: autograd computed it from the
      weights, and the one such value a loop prints at each step is its loss (`print(loss)`). Read as
      the training loss, in line order, at TABLE_ROWS lines or more, where the log names no training
      loss of its own;
    - the rows of a printed tensor that show only NaN/Inf (kept as `<prefix>printed_tensor`, one value
      per row; rows printed after an exception's line are its message's), a logger's message that is a list
      of losses, a step and an LR with a NaN or an Inf among the losses (`<prefix>printed_list`, VITS), a
      logger's comma-separated row that is NaN after its count and that nothing else read
      (`<prefix>printed_row`), a line that is a NaN or an
      Inf alone (`<prefix>printed_value`), and a name with a non-finite value alone on a line behind a
      paste's prefix (`<prefix><name>`, where the scanner kept no such name from the bare lines), and a loss's
      non-finite value under a dressed name that ends a line the scanner read nothing from
      (`<prefix>wQuantileLoss`);
    - metrics printed under a Chinese word for them (`[验证集] 准确率为 0.17`: `val_acc`);
    - a known name printed with its step in brackets (`train_batch_loss[ 6590 ]:  nan`, _INDEXED)."""
    if path.stat().st_size > BARE_MAX_BYTES:
        return series
    have = {s.name for s in series}
    read = set(np.concatenate([s.lines for s in series if s.lines is not None] or [np.zeros(0, np.int64)]).tolist())
    valued = set(np.concatenate([s.lines for s in series if s.lines is not None and s.name not in ("step", "epoch")]
                                or [np.zeros(0, np.int64)]).tolist())     # read for a value, not a counter only
    losses: tuple[list[int], list[float]] = ([], [])
    found: dict[str, tuple[list[int], list[float]]] = {}
    indexed: dict[str, tuple[list[int], list[float], list[float]]] = {}     # name -> lines, steps, values
    # a name the scanner read at a line or two only (a `valid_evaluation: loss=1.83` summary it took for the
    # training loss) gives way to the same name printed at every step with its step in brackets
    read_len = {s.name: len(s) for s in series}
    dressed: set[str] = set()

    def keep(name: str, line: int, value: float) -> None:
        at = found.setdefault(name, ([], []))
        at[0].append(line)
        at[1].append(value)

    finite_row = 0
    yolo_header = False        # the line before was YOLO's validation header: its `all` row may follow
    yolo: dict[str, tuple[list[int], list[float]]] = {}
    headers: set[int] = set()  # YOLO's header lines: the scanner's `mAP50-95: 100%` there is its progress bar
    coco = False               # pycocotools printed its summary: its figures are the mAP, YOLO's row its estimate
    listing = _Listing()
    with open(path, "rb") as f:
        raised = False
        for n, raw in enumerate(f, 1):
            if len(raw) > LINE_MAX:
                continue
            raised = raised or bool(_RAISED.match(raw))
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            text = undress(line)
            if (m := _PRINTED_TENSOR.match(text)) is not None:
                losses[0].append(n)
                losses[1].append(float(m.group(1) or m.group(2)))
                continue
            if (m := _COCO_AP.match(text)) is not None and _COCO_NAMES[m.group(1)] not in have:
                keep(_COCO_NAMES[m.group(1)], n, float(m.group(2)))
                coco = True
                continue
            if (m := _VOC_MAP.match(text)) is not None and "map50" not in have:
                keep("map50", n, float(m.group(1)))
                continue
            if yolo_header and (m := _YOLO_ALL.match(text)) is not None:
                for name, cell in zip(_YOLO_NAMES, m.groups()[2:]):
                    try:
                        value = float(cell)
                    except ValueError:       # a cell of signs and dots the pattern let through
                        continue
                    row = yolo.setdefault(name, ([], []))
                    row[0].append(n)
                    row[1].append(value)
                yolo_header = False
                continue
            yolo_header = _YOLO_VAL_HEADER.match(text) is not None
            if yolo_header:
                headers.add(n)
            if (m := _SEG_MIOU.match(text)) is not None and SEG_MIOU not in have and float(m.group(1)) <= 100:
                keep(SEG_MIOU, n, float(m.group(1)))    # as printed: a share or a percentage, read as a whole
                continue
            for name, value in (*_zh_metrics(text), *_at_k_metrics(text)):
                if name not in have:
                    keep(name, n, value)
            if n not in read and (m := _INDEXED.match(text)) is not None:
                name = canonical(m.group(1))
                if name in known_names() and read_len.get(name, 0) < INDEXED_ROWS:
                    at = indexed.setdefault(name, ([], [], []))
                    at[0].append(n)
                    at[1].append(float(m.group(2)))
                    at[2].append(float(m.group(3)))
                    continue
            if (m := _COUNTED_ROW.match(line)) is not None:
                listing.add(n, int(m.group(1)), m.group(2))
            comma = _comma_cells(text) if "," in text else []       # split once, read twice below
            comma_nan = _nonfinite_only(comma)
            if comma and not comma_nan:
                finite_row = n          # a comma row finite again after a NaN one: that one was a value left out
            if not re.search(r"nan|inf", text, re.I):
                continue
            if _nan_row(text) and not raised:
                name, value = PRINTED_NAN, math.nan
            elif n not in valued and not raised and "nan" in {c.lstrip("+-") for c in comma_nan}:
                name, value = PRINTED_ROW, math.nan
            elif n not in valued and not raised and (m := _LOGGED_LIST.search(text)) and _vits_losses(m.group(1)):
                name, value = PRINTED_LIST, math.nan
            elif (m := _BARE_NONFINITE.match(text)) and text.count("(") == text.count(")"):
                name, value = PRINTED_VALUE, float(m.group(1))
            elif text != line and (m := _LONE_PAIR.match(text)):
                name, value = m.group(1), float(m.group(2))
            elif n not in read and (m := _DRESSED_LOSS.search(text)) is not None:
                name, value = m.group(1), float(m.group(2))
                if prefix + name not in have:
                    dressed.add(prefix + name)
            else:
                continue
            if prefix + name not in have:
                keep(prefix + name, n, value)
    if headers:
        series = [x for s in series if (x := _without_lines(s, headers)) is not None]
        have = {s.name for s in series}
    if not coco:
        found.update({name: row for name, row in yolo.items() if name not in have})
    if sum(len(found[k][0]) for k in dressed) < DRESSED_REPEATS:
        found = {k: v for k, v in found.items() if k not in dressed}
    if (rows := found.get(prefix + PRINTED_ROW)) is not None and rows[0][-1] < finite_row:
        del found[prefix + PRINTED_ROW]     # the logger printed finite rows after its NaN one
    if (nan := found.get(prefix + PRINTED_NAN)) is not None and listing.per_class():
        kept = [(ln, v) for ln, v in zip(*nan) if ln not in listing.nonfinite]
        if kept:
            found[prefix + PRINTED_NAN] = ([ln for ln, _ in kept], [v for _, v in kept])
        else:
            del found[prefix + PRINTED_NAN]
    if PRINTED_LOSS not in have and len(losses[0]) >= TABLE_ROWS:
        found = {PRINTED_LOSS: losses, **found}
    # steps that rise at each line (a class's or a task's index repeats or restarts); a NaN loss is one at any count
    stepped = {name for name, (lines, steps, values) in indexed.items() if all(np.diff(steps) > 0)
               and (len(lines) >= INDEXED_ROWS or not all(map(math.isfinite, values)))}
    series = [s for s in series if s.name not in stepped]
    return series + [Series(name, artifact, np.arange(len(lines), dtype=np.float64), np.array(values),
                            np.array(lines, dtype=np.int64), "index") for name, (lines, values) in found.items()] \
        + [Series(name, artifact, np.array(steps), np.array(values), np.array(lines, dtype=np.int64), "step")
           for name, (lines, steps, values) in indexed.items() if name in stepped]
