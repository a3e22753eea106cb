"""Property-based fuzzing of every reader and parser (issue 35 item 1), with hypothesis.

The property, for each: a valid input gives a result; an invalid one a `TensorCFRError` (a
`games.GameError` is one) whose message is one non-empty line — never another exception
type, never a hang (each case runs under an alarm). The runs are derandomised (the same cases
every time) and bounded (seconds in all); `experiments/fuzz_readers.py` runs the same
properties for longer with fresh random cases.

`FUZZ_EXAMPLES` scales the cases per property (the experiment sets it).
"""

from __future__ import annotations

import collections
import io
import json
import os
import signal
import string
import sys
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

import tensorcfr
from tensorcfr import games
from tensorcfr.games import efg as efg_reader
from tensorcfr.compiler.sizes import parse_bytes
from tensorcfr.errors import TensorCFRError
from tensorcfr.evaluation import Policy
from tensorcfr.games.cards import parse_cards, parse_range
from tensorcfr.io.policies import load_policy
from tensorcfr.run import checkpoints, continuation
from tensorcfr.run.checkpoints import load_checkpoint, parse_duration, read_run_file, save_checkpoint

SCALE = float(os.environ.get("FUZZ_EXAMPLES", "1"))
ALARM = 10  # seconds for one case
DERANDOMIZE = "FUZZ_EXAMPLES" not in os.environ


def fuzz(n: int):
    """hypothesis settings: `n` cases (times FUZZ_EXAMPLES), seeded unless the experiment runs."""
    return settings(max_examples=max(1, int(n * SCALE)), deadline=None, derandomize=DERANDOMIZE, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=True)


TALLY: collections.Counter = collections.Counter()  # (test, "accepted" | "refused"): what the cases did


@pytest.fixture(scope="module", autouse=True)
def report_tally():
    """With $FUZZ_REPORT set, write the tally there as JSON (the experiment's table)."""
    yield
    if os.environ.get("FUZZ_REPORT"):
        with open(os.environ["FUZZ_REPORT"], "w") as f:
            json.dump([[test, outcome, n] for (test, outcome), n in sorted(TALLY.items())], f)


def holds(fn, *args, **kwargs):
    """fn(...)'s result, or None where it raised a one-line `TensorCFRError`; any other exception,
    a multi-line or empty message, or a case past `ALARM` seconds fails the property."""
    test = sys._getframe(1).f_code.co_name

    def too_slow(signum, frame):
        raise TimeoutError(f"no answer within {ALARM} s")
    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(ALARM)
    try:
        out = fn(*args, **kwargs)
        TALLY[test, "accepted"] += 1
        return out
    except games.GameError as e:  # TensorCFRError is one, and the games raise their own
        message = str(e)
        assert message.strip() and "\n" not in message, repr(message)
        TALLY[test, "refused"] += 1
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# -- values a hostile user would try -----------------------------------------------------------
HOSTILE_NUMBERS = st.sampled_from([0, 1, 2, 3, -1, 10**30, -(10**30), 2**63, 0.5, 1e-300, 1e300, 1e308,
                                   float("nan"), float("inf"), float("-inf"), -0.0, True, False, None])
LITERALS = st.recursive(
    HOSTILE_NUMBERS | st.integers(-5, 12) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(string.printable, max_size=12),
    lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=3).map(tuple), max_leaves=6)
NAMES = st.sampled_from(sorted(games.available()) + ["kuhn_poker", "leduc_poker", "nope", "efg", "openspiel"])


def literal(v) -> str:
    return repr(v) if not (isinstance(v, float) and (v != v or v in (float("inf"), float("-inf")))) else \
        f"float('{v}')"


@st.composite
def game_specs(draw):
    name = draw(NAMES)
    args = draw(st.lists(LITERALS, max_size=3))
    kwargs = draw(st.dictionaries(st.sampled_from(["ante", "n", "faces", "numdice", "dice", "seed", "depth", "board",
                                                   "pot", "stack", "bets", "raises", "cap", "range0", "ranks",
                                                   "suits", "x", "deal", "dice_sides", "players"]),
                                  LITERALS, max_size=3))
    inner = ", ".join([literal(a) for a in args] + [f"{k}={literal(v)}" for k, v in kwargs.items()])
    text = f"{name}({inner})" if args or kwargs or draw(st.booleans()) else name
    cut = draw(st.integers(0, 3))  # damaged text now and then: a cut or a stray character
    if cut == 1:
        text = text[:draw(st.integers(0, len(text)))]
    elif cut == 2:
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(list("()=,'\"\\[]{}#\x00é"))) + text[i:]
    return text


@fuzz(300)
@given(game_specs())
def test_game_specs(spec):
    """games.make builds a game or names what is wrong; a game it builds compiles within a
    small history limit, or is refused by name."""
    g = holds(games.make, spec)
    if g is not None:
        holds(tensorcfr.compile, g, max_histories=20_000)


@fuzz(120)
@given(st.text(max_size=40) | st.from_regex(r"[A-Za-z_]{1,12}\((.{0,20})\)", fullmatch=True))
def test_any_text_as_a_game_spec(spec):
    holds(games.make, spec)


OPENSPIEL = st.sampled_from(["kuhn_poker", "leduc_poker", "liars_dice", "tiny_hanabi", "matrix_rps", "goofspiel",
                             "kuhn_poker(players=3)", "kuhn_poker(players=x)", "leduc_poker(players=2)", "nope",
                             "liars_dice(numdice=0)", "kuhn_poker(", "", "chess", "kuhn_poker(players=-1)"])


@fuzz(60)
@given(st.one_of(OPENSPIEL.map(lambda g: f"openspiel:{g}"),
                 st.sampled_from(["efg:", "efg:/nonexistent.efg", "efg:/dev/null", "efg:/", "efg:" + "x" * 300])))
@example("openspiel:liars_dice(numdice=0)")  # found by this test: OpenSpiel's own check failed mid-walk (SpielError)
def test_openspiel_and_efg_specs(spec):
    """OpenSpiel games by name (made and compiled within a small limit) and .efg paths."""
    pytest.importorskip("pyspiel")
    g = holds(games.make, spec)
    if g is not None:
        holds(tensorcfr.compile, g, max_histories=20_000)


# -- the .efg reader ---------------------------------------------------------------------------
NUMBERS = st.one_of(st.sampled_from(["0", "1", "-1", "1/3", "2/0", "1e400", "-1e400", "1e-400", "1e999999999",
                                     "0.5", "1e308", "nan", "inf", "1/", "--1", "0x10", "1_000", "١"]),
                    st.integers(-10**6, 10**6).map(str), st.floats(allow_nan=False).map(repr),
                    st.fractions(max_denominator=10**6).map(str))


@st.composite
def efg_trees(draw, counter, depth=0):
    """EFG node lines, depth first: a well-formed tree (fresh outcome numbers, chance
    probabilities summing to 1, zero-sum payoffs), each number hostile now and then."""
    def num(valid: str) -> str:
        return draw(NUMBERS) if draw(st.integers(0, 9)) == 0 else valid

    kind = draw(st.sampled_from("tpc" if depth < 3 else "t"))
    name = draw(st.sampled_from(['""', '"n"', '"a\\"b"', '"é"']))
    if kind == "t":
        counter[0] += 1
        u = draw(st.integers(-5, 5))
        return [f't {name} {counter[0]} "" {{ {num(str(u))} {num(str(-u))} }}']
    k = draw(st.integers(1, 3))
    if kind == "p":
        player = num(draw(st.sampled_from(["1", "2"])))
        head = f'p {name} {player} {draw(st.integers(1, 2))} "" {{ {" ".join(chr(34) + c + chr(34) for c in "abc"[:k])} }} 0'
    else:
        counter[1] += 1
        probs = " ".join(f'"{c}" {num(f"1/{k}")}' for c in "abc"[:k])
        head = f'c {name} {counter[1]} "" {{ {probs} }} 0'
    lines = [head]
    for _ in range(k):
        lines += draw(efg_trees(counter, depth + 1))
    return lines


@st.composite
def efg_texts(draw):
    players = draw(st.sampled_from(['{ "A" "B" }'] * 6 + ['{ "A" }', '{ "A" "B" "C" }', '{ }']))
    lines = [f'EFG 2 R "fuzz" {players} ""'] + draw(efg_trees([0, 0]))
    damage = draw(st.integers(0, 5))
    text = "\n".join(lines) + "\n"
    if damage == 1 and len(text) > 1:  # a token dropped or the file cut
        text = text[:draw(st.integers(0, len(text) - 1))]
    elif damage == 2:
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(["{", "}", '"', "\\", "\x00", "\n", " 7 "])) + text[i:]
    return text


@fuzz(300)
@given(efg_texts())
def test_efg_texts(text):
    """A parsed file also compiles, or its game checks name what is wrong."""
    g = holds(efg_reader.from_text, text, "fuzz.efg")
    if g is not None:
        holds(tensorcfr.compile, g, form="generic", max_histories=10_000)


@fuzz(60)
@given(st.binary(max_size=200))
def test_efg_files_of_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("efg") / "x.efg"
    path.write_bytes(b"EFG 2 R " + data if data[:1] == b"\x01" else data)
    holds(games.make, f"efg:{path}")


# -- policy files --------------------------------------------------------------------------------
JSON = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.integers(-3, 3) | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=10)
KUHN = tensorcfr.compile("kuhn")
KUHN_TABLE = Policy.uniform(KUHN).to_dict()


@st.composite
def policy_documents(draw):
    """A Kuhn policy document with a few fields replaced by arbitrary JSON or hostile numbers."""
    table = json.loads(json.dumps(KUHN_TABLE))
    doc = {"format": "tensorcfr-policy", "version": 1, "game": "kuhn", "average": table}
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.sampled_from(["format", "version", "game", "average", "current", "infoset", "action", "prob"]))
        value = draw(JSON | HOSTILE_NUMBERS)
        key = draw(st.sampled_from(sorted(table)))
        if where in ("infoset",):
            table[key] = value
        elif where == "action":
            table[key] = {draw(st.text(max_size=5)): 1.0}
        elif where == "prob" and isinstance(table[key], dict) and table[key]:
            table[key][draw(st.sampled_from(sorted(table[key])))] = value
        else:
            doc[where] = value
    return doc


@fuzz(200)
@given(policy_documents())
def test_json_policy_files(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("pol") / "p.json"
    path.write_text(json.dumps(doc))  # NaN and Infinity tokens included: the reader must refuse them
    d = holds(load_policy, str(path))
    if d is not None:
        for which in ("average", "current"):
            if which in d:
                holds(Policy.from_dict, KUHN, d[which])


NPZ_FIELDS = ["format", "version", "game", "infoset_keys", "player", "offsets", "action_names", "average", "current"]
ARRAYS = st.one_of(st.integers(-2, 5).map(np.int64), st.text(max_size=4).map(np.str_),
                   st.lists(st.floats(), max_size=14).map(np.array),
                   st.lists(st.integers(-3, 30), max_size=14).map(lambda v: np.array(v, dtype=np.int64)),
                   st.lists(st.text(max_size=3), max_size=14).map(lambda v: np.array(v, dtype=str)),
                   st.just(np.zeros((2, 2))))


def kuhn_npz() -> dict:
    """The arrays of Kuhn's uniform policy as save_policy writes them."""
    from tensorcfr.io.policies import save_policy

    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fuzz-{os.getpid()}.npz")
    save_policy(path, "kuhn", {"average": KUHN_TABLE, "current": KUHN_TABLE}, players=KUHN.infoset_players())
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    os.remove(path)
    return arrays


KUHN_NPZ = kuhn_npz()


@fuzz(120)
@given(st.lists(st.tuples(st.sampled_from(NPZ_FIELDS), st.none() | ARRAYS), max_size=3))
def test_npz_policy_files(tmp_path_factory, edits):
    """Kuhn's .npz policy with fields removed or replaced: read and checked against the game,
    or refused by name."""
    arrays = dict(KUHN_NPZ)
    for field, value in edits:
        if value is None:
            arrays.pop(field, None)
        else:
            arrays[field] = value
    path = tmp_path_factory.mktemp("pol") / "p.npz"
    np.savez(path, **arrays)
    d = holds(load_policy, str(path))
    if d is not None and "average" in d:
        holds(Policy.from_dict, KUHN, d["average"])
    if not edits:
        assert d is not None and d["average"] == KUHN_TABLE


@fuzz(40)
@given(st.binary(max_size=300))
def test_npz_policy_files_of_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("pol") / "p.npz"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # a zip (what np.load expects) holding garbage
        z.writestr("average.npy", data)
    path.write_bytes(buf.getvalue() if data[:1] == b"\x00" else data)
    holds(load_policy, str(path))


# -- run.json, checkpoints, the value cache --------------------------------------------------------
@fuzz(150)
@given(JSON | st.fixed_dictionaries({"format": st.just("tensorcfr-run"), "version": JSON, "args": JSON,
                                     "algo": JSON, "config": JSON, "save_policy": JSON}))
def test_run_files(tmp_path_factory, doc):
    """read_run_file and the CLI's reading of its settings (`_stored_args`, what resume trusts)."""
    from tensorcfr.cli.commands import _stored_args

    run_dir = tmp_path_factory.mktemp("run")
    (run_dir / "run.json").write_text(json.dumps(doc))
    info = holds(read_run_file, str(run_dir))
    if info is not None:
        holds(_stored_args, str(run_dir), info)


CHECKPOINT_BYTES = None


def a_checkpoint() -> bytes:
    global CHECKPOINT_BYTES
    if CHECKPOINT_BYTES is None:
        s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
        s.step(3)
        buf = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fuzz-ckpt-{os.getpid()}.pt")
        save_checkpoint(buf, {"solver": s.state_dict(), "loop": {}, "algo": "cfr+", "iteration": 3})
        with open(buf, "rb") as f:
            CHECKPOINT_BYTES = f.read()
        os.remove(buf)
    return CHECKPOINT_BYTES


@fuzz(120)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4), st.integers(0, 10**6),
       st.booleans())
def test_damaged_checkpoints(tmp_path_factory, flips, cut, cut_it):
    """A real checkpoint with bytes changed or cut: refused by name, or (no change) read back whole."""
    data = bytearray(a_checkpoint())
    for at, value in flips:
        data[at % len(data)] = value
    if cut_it:
        data = data[:cut % (len(data) + 1)]
    path = tmp_path_factory.mktemp("ckpt") / "checkpoint.pt"
    path.write_bytes(bytes(data))
    d = holds(load_checkpoint, str(path))
    if d is not None:
        d = holds(checkpoints.check_checkpoint, d, str(path))
    if bytes(data) == a_checkpoint():
        assert d is not None and d["iteration"] == 3


@fuzz(100)
@given(JSON | st.dictionaries(st.sampled_from(["dudo(2,1,1)", "x"]),
                              st.fixed_dictionaries({"game": JSON, "value": JSON | HOSTILE_NUMBERS,
                                                     "nash_conv": JSON | HOSTILE_NUMBERS, "checksum": JSON}),
                              max_size=2))
def test_value_cache(tmp_path_factory, monkeypatch_module, table):
    """A continuation-value cache of any content: read as a table, each entry verified or dropped."""
    path = tmp_path_factory.mktemp("cache") / "values.json"
    monkeypatch_module.setenv("TENSORCFR_CACHE", str(path.parent))
    from tensorcfr.paths import values_file

    with open(values_file(), "w") as f:
        f.write(json.dumps(table))
    loaded = holds(continuation._load)
    assert isinstance(loaded, dict)
    for name, entry in loaded.items():
        got = holds(continuation._verified, name, entry)
        assert got is None or isinstance(got.get("value"), float)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


# -- cards, ranges, bet sizes, durations, byte sizes ------------------------------------------------
CARDISH = st.text(alphabet="23456789TJQKAcdhsx +-,:.0123456789oOsS", max_size=30)
CARD_NAMES = [r + s for r in "23456789TJQKA" for s in "cdhs"]
BOARDS = st.lists(st.sampled_from(CARD_NAMES), min_size=0, max_size=6).flatmap(
    lambda cards: st.sampled_from(["", " ", ","]).map(lambda sep: sep.join(cards)))
RANGE_ITEMS = st.sampled_from(["AA", "KK", "22+", "AKs", "AKo", "AK", "T9s+", "A5s-A2s", "KQo-KTo", "QJ", "72o",
                               "AsKd", "99-66", "A2+", "JJ-", "XX", "AKx"])
RANGES = st.lists(st.tuples(RANGE_ITEMS, st.sampled_from(["", ":0.5", ":1", ":0", ":2", ":-1", ":nan", ":1e400", ":"])),
                  min_size=1, max_size=4).map(lambda items: ",".join(i + w for i, w in items))


@fuzz(300)
@given(RANGES | CARDISH | st.text(max_size=20))
def test_ranges(text):
    w = holds(parse_range, text)
    if w is not None:
        assert w.shape == (1326,) and np.isfinite(w).all() and (w >= 0).all()  # relative weights


@fuzz(200)
@given(BOARDS | CARDISH | st.text(max_size=12))
def test_boards(text):
    cards = holds(parse_cards, text)
    if cards is not None:
        assert len(set(cards)) == len(cards) and all(0 <= c < 52 for c in cards)


@fuzz(60)
@given(st.sampled_from([(0.5, 1, "allin"), (1,), "allin", ((1,), (2,)), ()]) | LITERALS,
       st.one_of(st.none(), LITERALS), RANGES | st.sampled_from(["", "AA", "KK,QQ:0.5", "xx", "AKs:1e400"]))
def test_bet_sizes_and_ranges_of_a_spot(bets, raises, range0):
    """A river spot of a small deck with fuzzed bet sizes, raise sizes and a range: made and
    compiled, or refused by name."""
    spec = (f"holdem_river(board=AsKhQsJh9s, ranks=AKQJ9T, suits=sh, bets={literal(bets)}, "
            f"raises={literal(raises)}, range0={range0!r})")
    g = holds(games.make, spec)
    if g is not None:
        holds(tensorcfr.compile, g, form="public", max_histories=200_000)


@fuzz(200)
@given(st.text(alphabet="0123456789.smhdSMHD -e+", max_size=14) | st.text(max_size=8) | HOSTILE_NUMBERS
       | st.integers(300, 500).map(lambda n: "9" * n + "s"))
def test_durations(text):
    if text is None or isinstance(text, bool):
        return
    v = holds(parse_duration, text)
    assert v is None or (0 < v < float("inf")), v


@fuzz(200)
@given(st.text(alphabet="0123456789.KMGTkmgtB -e+", max_size=12) | st.text(max_size=8)
       | st.sampled_from(["auto", "none", "AUTO", "1G", "1e400G", "-1", "0"]) | st.integers(-5, 2**70)
       | st.integers(300, 500).map(lambda n: "9" * n + "G"))
def test_byte_sizes(text):
    v = holds(parse_bytes, text)
    assert v is None or v in ("auto",) or (isinstance(v, int) and v >= 0), v


def test_the_fuzz_finds_what_it_should():
    """The property fails where it should: a reader raising something else is caught."""
    with pytest.raises(ZeroDivisionError):
        holds(lambda: 1 / 0)
    with pytest.raises(AssertionError):
        holds(lambda: (_ for _ in ()).throw(TensorCFRError("two\nlines")))
    assert holds(lambda: (_ for _ in ()).throw(TensorCFRError("one line"))) is None
