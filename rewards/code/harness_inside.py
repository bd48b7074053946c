"""Test-harness runtime that runs *inside* the sandbox: next to the untrusted solution, or in the trusted process.

Shipped to every run of the solution as ``rk_harness.py`` (``harness.py`` on the host reads this file as package
data and never imports it; the local backend's warm forkserver imports it once). ``main.py`` calls :func:`_rk_main`,
which reads ``rk_spec.json`` and writes ONE nonce-prefixed JSON record straight to fd 1. The trusted process is
started differently: ``python3 -s -S -c <this source>`` (relative entries dropped from its path first) with its
spec on stdin, so it imports and reads nothing from a place a solution could have written (the work directory,
``/tmp``, user or site paths). Modes:

- next to the solution: ``call`` (one call, its arguments only), ``exprs`` (the solution sub-expressions of a
  simple assert), ``answer`` (the calls a program test asked, in order; see below), ``whole`` (untrusted: the
  whole test program, only when the user opted in);
- trusted, without the solution: ``check`` (assert glue over the solution's values, and program tests replayed
  over the solution's answers).

Program tests never run next to the solution. The trusted process runs the test with every solution expression
replaced by a lookup of the answers so far; a missing answer stops that *verdict* run, and a *probe* run (asserts
made non-fatal, unknown results as :class:`_RkPending` placeholders) collects the calls to ask. The host sends
those calls (arguments only) to an ``answer`` run of the solution and repeats. Standard library only; the encoder
accepts exact plain types only; the verdict is always computed outside the solution's process.
"""

import builtins
import collections as _rk_collections
import hashlib
import importlib
import json
import math
import os

# dict subclasses of the standard library that compare equal to a dict with the same items; checked by identity
_RK_DICTS = {c.__name__: c for c in (_rk_collections.Counter, _rk_collections.defaultdict, _rk_collections.OrderedDict)}
_RK_PLAIN = (type(None), bool, int, float, str, list, tuple, set, frozenset, dict)
_RK_MAX_ASKED = 20000


class _RkMissing(BaseException):
    # verdict run: an answer the solution was not asked for yet (the test's `except Exception` cannot hide it)
    pass


class _RkBlocked(BaseException):
    # probe run: the program needs the value of a call not answered yet
    pass


class _RkUndecidable(BaseException):
    # an argument that is not a plain value (a function, an object of the test's): it cannot be sent to the solution;
    # or a check whose truth depends on what the trusted process cannot know of the solution's objects
    pass


_RK_NOT_PLAIN = "passes the solution a value that is not plain data (a function or an object)"


class _RkFails(BaseException):
    # an answer the test cannot use (StopIteration, which would silently end the test's iteration; an opaque value)
    pass


def _rk_encode(x, depth=0, handles=False):
    # handles=True (inputs only): a value of the solution's stands for itself by its handle (the id of the call that
    # returned it), so a test that passes the solution's objects back to it (MBPP's trees) is asked consistently
    if depth > 200:
        raise ValueError("value nested too deeply")
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return x
    if t is float:
        return x if math.isfinite(x) else {"$float": repr(x)}
    if t is list:
        return [_rk_encode(v, depth + 1, handles) for v in x]
    if t is tuple:
        return {"$tuple": [_rk_encode(v, depth + 1, handles) for v in x]}
    if t is set or t is frozenset:
        items = [_rk_encode(v, depth + 1, handles) for v in x]
        return {"$set": sorted(items, key=lambda i: json.dumps(i, sort_keys=True))}
    if t is dict or (t.__module__ == "collections" and t.__name__ in _RK_DICTS and t is _RK_DICTS[t.__name__]):
        pairs = dict.items(x)
        return {"$dict": [[_rk_encode(k, depth + 1, handles), _rk_encode(v, depth + 1, handles)] for k, v in pairs]}
    if t is complex:
        return {"$complex": [_rk_encode(x.real, depth + 1), _rk_encode(x.imag, depth + 1)]}
    if handles and (t is _RkStub or t is _RkPending):
        handle = object.__getattribute__(x, "_rk")
        if handle is None:
            raise _RkBlocked()  # computed from a result not known yet
        return {"$obj": handle}
    raise TypeError("not a plain value: " + t.__name__)


def _rk_decode(x, objects=None):
    if isinstance(x, list):
        return [_rk_decode(v, objects) for v in x]
    if isinstance(x, dict):
        ((tag, body),) = x.items()
        if tag == "$float":
            return float(body)
        if tag == "$tuple":
            return tuple(_rk_decode(v, objects) for v in body)
        if tag == "$set":
            return {_rk_decode(v, objects) for v in body}
        if tag == "$complex":
            return complex(_rk_decode(body[0]), _rk_decode(body[1]))
        if tag == "$dict":
            return {_rk_decode(k, objects): _rk_decode(v, objects) for k, v in body}
        if tag == "$obj" and objects is not None:
            return objects[body]  # KeyError: the call that made it did not return a value
        raise ValueError("unknown tag " + tag)
    return x


def _rk_call_parts(args, kwargs):
    return [list(args), [[k, kwargs[k]] for k in sorted(kwargs)]]


# --------------------------------------------------------------------------------------- trusted side: asking
_RK = {"table": {}, "counts": {}, "asked": None, "assuming": 0, "flags": set(), "why": "", "crossed": {}}


def _rk_refuse(why, guess):
    """A check whose truth the trusted process cannot know exactly: the verdict run refuses it (the test is
    undecidable, its reason named); the probe only looks for the calls to ask, so it goes on with ``guess``."""
    if _RK["asked"] is not None:
        return guess
    _RK["flags"].add("undecidable")
    _RK["why"] = _RK["why"] or why
    raise _RkUndecidable(why)


def _rk_cross(value):
    # containers decoded from the solution's answers: copies of its values, whose identity the test cannot see
    t = type(value)
    if t is dict:
        parts = [*dict.keys(value), *dict.values(value)]
    elif t is list or t is tuple or t is set or t is frozenset:
        parts = value
    else:
        return value
    _RK["crossed"][id(value)] = value
    for part in parts:
        _rk_cross(part)
    return value


def _rk_ask(target, kind, payload):
    """The solution's result for one call of the test: from the answers table, else asked (probe) or missing."""
    try:
        encoded = _rk_encode(payload, handles=True)
        key = kind + "\0" + target + "\0" + json.dumps(encoded, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        _RK["flags"].add("undecidable")
        _RK["why"] = _RK["why"] or _RK_NOT_PLAIN
        raise _RkUndecidable(kind) from None
    count = _RK["counts"].get(key, 0)
    _RK["counts"][key] = count + 1
    qid = hashlib.blake2b(key.encode(), digest_size=16).hexdigest() + "#" + str(count)
    entry = _RK["table"].get(qid)
    if entry is None:
        asked = _RK["asked"]
        if asked is None:
            _RK["flags"].add("missing")
            raise _RkMissing(qid)
        if qid not in _RK["asked_ids"]:
            if len(asked) >= _RK_MAX_ASKED:
                raise _RkBlocked()
            asked.append([qid, kind, target, encoded])
            _RK["asked_ids"].add(qid)
        return _RkPending(qid)
    if "value" in entry:
        return _rk_cross(_rk_decode(entry["value"]))
    if "object" in entry:
        return _RkStub(qid, entry["object"])
    if "raise" in entry:
        raise _rk_error(entry["raise"])("raised by the solution")
    _RK["flags"].add("fails")
    raise _RkFails(qid)


_RK_ERRORS = {}


def _rk_error(raised):
    # the class to raise for the solution's exception: the builtin itself by its name, or for a class of the
    # solution's (a list of its builtin bases) a class with those bases, so every `except` of a builtin class and
    # pytest.raises match it exactly as they match the original; StopIteration would end the test's own loop
    # quietly, so it fails the test instead
    exact = type(raised) is str
    names = (raised,) if exact else tuple(raised)
    if any(n in ("StopIteration", "StopAsyncIteration") for n in names):
        _RK["flags"].add("fails")
        raise _RkFails("StopIteration")
    key = (exact, names)
    if key not in _RK_ERRORS:
        bases = tuple(getattr(builtins, n, None) for n in names)
        if not all(isinstance(b, type) and issubclass(b, Exception) for b in bases):
            _RK["flags"].add("fails")
            raise _RkFails("unknown exception")
        try:
            _RK_ERRORS[key] = bases[0] if exact else type("SolutionError", bases, {"__module__": "solution"})
        except TypeError:
            _RK_ERRORS[key] = None
    error = _RK_ERRORS[key]
    if error is None:
        return _rk_refuse(
            "raises an exception class of the solution's whose builtin bases cannot be combined", Exception
        )
    return error


def _rk_replay(site, parts):
    return _rk_ask(site, "site", list(parts))


# what the solution's process reports of an object it returned (answer ``{"object": [same, traits]}``): ``same`` is
# the id of the first call that returned that very object (two stubs with one ``same`` are one object), ``traits``
# which of object's own behaviours its class keeps: identity ``==``/``!=``, identity hash, always true
_RK_EQ, _RK_HASH, _RK_TRUE = 1, 2, 4
_RK_COPIES = "compares identity ('is') of values that crossed from the solution's process as copies"


class _RkStub:
    # a value of the solution's that is not plain (a function, class or instance): calls, attribute reads and
    # writes reach it, each one asked like any other call; identity, ``==``, hash and truth are decided from what
    # the solution's process reported of the object, exactly, or the check is refused (never guessed)
    __slots__ = ("_rk", "_rk_facts")

    def __init__(self, handle, facts=None):
        object.__setattr__(self, "_rk", handle)
        object.__setattr__(self, "_rk_facts", facts)

    def _rk_handle(self):
        handle = object.__getattribute__(self, "_rk")
        if handle is None:
            raise _RkBlocked()
        return handle

    def __call__(self, *args, **kwargs):
        return _rk_ask(self._rk_handle(), "call", _rk_call_parts(args, kwargs))

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _rk_ask(self._rk_handle(), "get", name)

    def __setattr__(self, name, value):
        _rk_ask(self._rk_handle(), "set", [name, value])

    def __eq__(self, other):
        return _rk_equal(self, other, True)

    def __ne__(self, other):
        return _rk_equal(self, other, False)

    def __hash__(self):
        facts = _rk_facts(self)
        if facts is not None and facts[1] & _RK_HASH:
            return hash(facts[0])
        return _rk_refuse("hashes an object of the solution's whose class defines __hash__", object.__hash__(self))

    def __str__(self):
        return _rk_text(self, "str", "")

    def __repr__(self):
        return _rk_text(self, "repr", "")

    def __format__(self, spec):
        return _rk_text(self, "format", spec)

    def __bool__(self):
        facts = _rk_facts(self)
        if facts is not None and facts[1] & _RK_TRUE:
            return True
        return _rk_refuse(
            "takes the truth of an object of the solution's whose class defines __bool__ or __len__", True
        )


def _rk_text(stub, how, spec):
    # the text of a solution object is the solution's own (its __str__, __repr__, __format__), asked like a call; the
    # probe goes on with an empty text once the question is asked (a test printing objects in a loop asks all of
    # them in one round), and the verdict run has the real ones
    text = _rk_ask(stub._rk_handle(), "text", [how, spec])
    if type(text) is str:
        return text
    if isinstance(text, _RkPending):
        return ""
    _RK["flags"].add("fails")
    raise _RkFails(how)


def _rk_facts(value):
    # (same, traits) of a solution object the answers describe; None for anything else (probe placeholders too)
    if not isinstance(value, _RkStub):
        return None
    facts = object.__getattribute__(value, "_rk_facts")
    return facts if type(facts) is list and len(facts) == 2 else None


def _rk_equal(stub, other, equal):
    # ``stub == other`` (``!=`` when not ``equal``). Two objects whose classes keep identity ``==`` are equal when
    # they are one object (same); one such object is never equal to anything of the test's (object's own rule).
    # A class's own ``__eq__`` against a plain value follows the type-strict rule: an object of the solution's is
    # never one of the test's plain values. Two objects, one with its own ``__eq__``: the solution's process
    # compares them (Python's own ``==``/``!=`` there, as in one process), asked like a call
    mine, theirs = _rk_facts(stub), _rk_facts(other)
    if mine is None or (theirs is None and isinstance(other, _RkStub)):
        return _RkPending(None, equal)  # a probe placeholder: the probe follows the passing path
    if theirs is None:
        return NotImplemented if mine[1] & _RK_EQ else not equal
    if mine[1] & theirs[1] & _RK_EQ:
        return (mine[0] == theirs[0]) is equal
    verdict = _rk_ask(stub._rk_handle(), "eq" if equal else "ne", other)
    if isinstance(verdict, _RkPending):
        return _RkPending(object.__getattribute__(verdict, "_rk"), equal)
    return verdict


def _rk_singleton(value):
    return value is None or value is True or value is False or value is ... or value is NotImplemented


def _rk_is(a, b):
    """``a is b`` in a program test (the plan rewrites every ``is``): exact for the solution's objects (by the
    object the solution's process reported) and for the test's own values; refused for values that crossed from
    the solution's process, which are copies (``f(xs) is xs`` holds there and cannot hold here)."""
    if a is b:
        return True
    if _rk_singleton(a) or _rk_singleton(b):
        return False  # None, True, False, ...: one object everywhere, so a copy is one exactly when the original is
    mine, theirs = _rk_facts(a), _rk_facts(b)
    if mine is not None and theirs is not None:
        return mine[0] == theirs[0]
    if isinstance(a, _RkStub) or isinstance(b, _RkStub):
        return False  # an object of the solution's is never the test's own value, nor a plain value it reported
    crossed = _RK["crossed"]
    if crossed.get(id(a), b) is a or crossed.get(id(b), a) is b:
        return _rk_refuse(
            "compares identity ('is') of values that crossed from the solution's process as copies", False
        )
    return False


def _rk_blocked(self, *args):
    raise _RkBlocked()


def _rk_lazy(self, *args):
    return _RkPending(None)


class _RkPending(_RkStub):
    # probe run: the result of a call not answered yet. Calls and attributes on it are asked too (it may be an
    # object); arithmetic and comparisons give another unknown. Its truth follows the path of a solution that
    # passes: `==` is true and `!=` false (the test's own comparison of the result with what it expects), any
    # unknown inside an assert is true; anything else that needs its value stops the probe
    __slots__ = ("_rk_truth",)

    def __init__(self, handle, truth=None):
        object.__setattr__(self, "_rk", handle)
        object.__setattr__(self, "_rk_facts", None)
        object.__setattr__(self, "_rk_truth", truth)

    def __bool__(self):
        truth = object.__getattribute__(self, "_rk_truth")
        if truth is not None:
            return truth
        if _RK["assuming"]:
            return True
        raise _RkBlocked()

    def __eq__(self, other):
        return _RkPending(None, True)

    def __ne__(self, other):
        return _RkPending(None, False)

    __hash__ = _rk_blocked


_RK_LAZY = "lt le gt ge add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow neg"
_RK_LAZY += " pos abs invert and rand or ror xor rxor lshift rlshift rshift rrshift matmul rmatmul"
_RK_BLOCKING = "iter len index int float complex str repr format contains getitem setitem delitem round trunc"
_RK_BLOCKING += " floor ceil bytes reversed enter exit next"
for _name in _RK_LAZY.split():
    setattr(_RkPending, "__" + _name + "__", _rk_lazy)
for _name in _RK_BLOCKING.split():
    setattr(_RkPending, "__" + _name + "__", _rk_blocked)


class _RkAssuming:
    # `with __rk_assuming: <assert test>` in the probe: the assert's calls are made, its outcome is not needed
    def __enter__(self):
        _RK["assuming"] += 1

    def __exit__(self, kind, value, traceback):
        _RK["assuming"] -= 1
        return kind is not None and issubclass(kind, (Exception, _RkBlocked))


def _rk_test_random(seed):
    # the test's own `random`, seeded from the test: every round draws the same inputs, and the solution's use
    # of the real module (in another process anyway) cannot shift the test's draws
    import random
    import types

    private = types.ModuleType("random")
    generator = random.Random(seed)
    shared = getattr(random, "_inst", None)
    for name in dir(random):
        value = getattr(random, name)
        if shared is not None and getattr(value, "__self__", None) is shared:
            value = getattr(generator, name)
        setattr(private, name, value)
    return private


def _rk_has_stub(values):
    return any(isinstance(v, _RkStub) or (type(v) is tuple and _rk_has_stub(v)) for v in values)


def _rk_guarded(name, real):
    # a builtin that would answer about the proxy, not the solution's object (type, isinstance, id ...): refused
    # when a solution object reaches it
    def guarded(*args, **kwargs):
        if _rk_has_stub(args) and not (name == "type" and len(args) == 3):
            _rk_refuse(name + "() of an object of the solution's (the trusted process holds a proxy)", None)
        return real(*args, **kwargs)  # the probe goes on with the proxy's answer

    return guarded


_RK_GUARDED = ("type", "isinstance", "issubclass", "id", "callable")


def _rk_unittest_identity():
    # unittest's assertIs/assertIsNot compare with its own `is`, outside the test's rewritten source
    import unittest

    def assert_is(self, first, second, msg=None):
        if not _rk_is(first, second):
            raise self.failureException("not identical")

    def assert_is_not(self, first, second, msg=None):
        if _rk_is(first, second):
            raise self.failureException("unexpectedly identical")

    unittest.TestCase.assertIs = assert_is
    unittest.TestCase.assertIsNot = assert_is_not
    for name in ("assertIsInstance", "assertNotIsInstance"):
        real = getattr(unittest.TestCase, name)
        setattr(unittest.TestCase, name, _rk_guarded(name, real))


def _rk_test_scope(base, seed, modules, trusted=False):
    # builtins whose import hands the test its private `random` (imports inside check() included); in the trusted
    # process, the builtins that would read a proxy instead of the solution's object are guarded
    private = _rk_test_random(seed)
    real_import = builtins.__import__

    def test_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "random" and level == 0:
            return private
        module = real_import(name, globals, locals, fromlist, level)
        if trusted and name == "unittest" and not _RK.get("unittest"):
            _RK["unittest"] = True
            _rk_unittest_identity()
        return module

    test_builtins = dict(builtins.__dict__, __import__=test_import)
    if trusted and "unittest" in modules and not _RK.get("unittest"):
        _RK["unittest"] = True
        _rk_unittest_identity()
    if trusted:
        test_builtins.update({name: _rk_guarded(name, getattr(builtins, name)) for name in _RK_GUARDED})
    scope = dict(base)
    scope.update(modules)
    if "random" in modules:
        scope["random"] = private
    scope["__builtins__"] = test_builtins
    return scope


def _rk_run_program(source, check, modules, asked):
    # one run of a program test over the answers table: "passed", "failed", "missing", "undecidable" or "probed"
    _RK.update(table=check["table"], counts={}, asked=asked, asked_ids=set(), assuming=0, flags=set(), why="")
    _RK["crossed"] = {}
    base = {"__rk_replay": _rk_replay, "__rk_assuming": _RkAssuming(), "__rk_is": _rk_is, "__name__": "__rk_test__"}
    try:
        exec(compile(source, "<test>", "exec"), _rk_test_scope(base, check["seed"], modules, trusted=True))
        outcome = "passed"
    except AssertionError:
        outcome = "failed"
    except BaseException as exc:  # the test errored (whatever it raised): reported by the exception's type name
        outcome = "errored:" + type(exc).__name__[:60]
    flags = _RK["flags"]  # set even when the test caught the exception with a bare `except:`
    for flag in ("undecidable", "missing", "fails"):
        if flag in flags:
            return flag
    return outcome if asked is None else "probed"


def _rk_program_check(check, modules):
    outcome = _rk_run_program(check["replay"], check, modules, None)
    if outcome == "undecidable":
        return {"undecidable": _RK["why"][:200]}
    if outcome.startswith("errored:"):
        return {"errored": outcome[8:]}
    if outcome != "missing":
        return {"passed": outcome == "passed"}
    asked = []
    if _rk_run_program(check["probe"], check, modules, asked) == "undecidable":
        return {"undecidable": _RK["why"][:200]}
    return {"asked": asked}


def _rk_glue_check(check, modules):
    scope = dict(modules, __builtins__=builtins, __rk_v=[_rk_decode(v) for v in check["values"]])
    try:
        return {"passed": bool(eval(compile(check["source"], "<test>", "eval"), scope))}
    except Exception as exc:
        return {"errored": type(exc).__name__[:60]}


# --------------------------------------------------------------------------------------- solution side: answering
def _rk_entry(value, qid, seen):
    try:
        return {"value": _rk_encode(value)}
    except (TypeError, ValueError, RecursionError):
        pass
    if type(value) in _RK_PLAIN:
        return {"opaque": True}
    same = seen.setdefault(id(value), qid)  # every result stays alive in `results`: ids are not reused
    kind = type(value)
    traits = _RK_EQ if kind.__eq__ is object.__eq__ and kind.__ne__ is object.__ne__ else 0
    traits |= _RK_HASH if kind.__hash__ is object.__hash__ else 0
    traits |= 0 if hasattr(kind, "__bool__") or hasattr(kind, "__len__") else _RK_TRUE
    return {"object": [same, traits]}


def _rk_raised(kind):
    # a builtin exception by its name; a class of the solution's by its most derived builtin bases (in MRO order),
    # so the trusted side can raise a class that every builtin `except` clause matches exactly as it matches this
    if getattr(builtins, kind.__name__, None) is kind:
        return kind.__name__
    bases = []
    for base in kind.__mro__:
        if getattr(builtins, base.__name__, None) is base and not any(issubclass(b, base) for b in bases):
            bases.append(base)
    return [b.__name__ for b in bases if issubclass(b, Exception)][:8] or "Exception"


def _rk_answer(spec, scope):
    # perform the asked calls in order; a result is kept by its call's id, so later calls can pass it back
    chains = {site: eval(compile(source, "<site>", "eval"), scope) for site, source in spec["chains"].items()}
    results, answers, seen = {}, {}, {}
    for qid, kind, target, payload in spec["queries"]:
        try:
            inputs = _rk_decode(payload, results)
        except (KeyError, ValueError, TypeError):
            answers[qid] = {"opaque": True}
            continue
        try:
            if kind == "site":
                value = chains[target](inputs)
            elif target not in results:
                answers[qid] = {"opaque": True}
                continue
            elif kind == "call":
                value = results[target](*inputs[0], **dict(inputs[1]))
            elif kind == "get":
                value = getattr(results[target], inputs)
            elif kind == "eq":
                value = results[target] == inputs
            elif kind == "ne":
                value = results[target] != inputs
            elif kind == "text":  # str(), repr() or format() of an object, as its own class writes it
                how, spec = inputs
                obj = results[target]
                value = str(obj) if how == "str" else repr(obj) if how == "repr" else format(obj, spec)
                if type(value) is not str:
                    raise TypeError(how + " returned a non-string")
            else:
                setattr(results[target], inputs[0], inputs[1])
                value = None
        except Exception as exc:
            answers[qid] = {"raise": _rk_raised(type(exc))}
            continue
        results[qid] = value
        answers[qid] = _rk_entry(value, qid, seen)
    return {"answers": answers}


def _rk_read_stdin():
    chunks = []
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _rk_main(spec_on_stdin=False):
    # the trusted stage (spec_on_stdin: started by ``python3 -s -S -c``) reads nothing from the work area
    if spec_on_stdin:
        spec = json.loads(_rk_read_stdin())
    else:
        with open("rk_spec.json") as handle:
            spec = json.load(handle)
        try:
            os.remove("rk_spec.json")
        except OSError:
            pass
    prefix = "\n" + spec["nonce"]

    def emit(record):
        data = (prefix + json.dumps(record, allow_nan=False) + "\n").encode()
        while data:
            data = data[os.write(1, data) :]

    modules = {name: importlib.import_module(name) for name in spec.get("modules", [])}
    if spec["mode"] == "check":
        results = [
            _rk_program_check(check, modules) if "replay" in check else _rk_glue_check(check, modules)
            for check in spec["checks"]
        ]
        emit({"results": results})
        os._exit(0)
    with open("solution.py", encoding="utf-8") as handle:
        source = handle.read()
    scope = {"__name__": "__rk_solution__", "__builtins__": builtins, "__file__": "solution.py"}
    try:
        exec(compile(spec.get("prelude") or "", "<prelude>", "exec"), scope)
        preluded = dict(scope)  # what the prelude bound: never the solution's function unless the solution rebinds it
        exec(compile(source, "solution.py", "exec"), scope)
    except BaseException as exc:  # whatever the solution raised while loading fails it
        emit({"error": "solution raised " + type(exc).__name__ + " while loading"})
        os._exit(0)
    for name, module in modules.items():
        scope.setdefault(name, module)
    try:
        if spec["mode"] == "call":
            own = {k: v for k, v in scope.items() if k not in preluded or preluded[k] is not v}
            target = own.get(spec["fn_name"])
            if not callable(target) and isinstance(own.get("Solution"), type):
                target = getattr(own["Solution"](), spec["fn_name"], None)
            if not callable(target):
                emit({"error": "no function named " + spec["fn_name"]})
                os._exit(0)
            record = {"value": _rk_encode(target(*spec["args"]))}
        elif spec["mode"] == "answer":
            record = _rk_answer(spec, scope)
        elif spec["mode"] == "whole":
            test_scope = _rk_test_scope(dict(scope, __name__="__rk_test__"), spec["seed"], modules)
            try:
                exec(compile(spec["program"], "<test>", "exec"), test_scope)
                record = {"passed": True}
            except AssertionError:
                record = {"passed": False}
            except BaseException as exc:
                record = {"passed": False, "error": "test raised " + type(exc).__name__[:60]}
        else:
            values = [eval(compile(e, "<test>", "eval"), scope) for e in spec["exprs"]]
            try:
                record = {"values": [_rk_encode(v) for v in values]}
            except TypeError:  # an object, not a value: the host decides this assert in the program rounds
                record = {"objects": True}
    except BaseException as exc:  # the solution's failure, whatever it raised
        record = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
    emit(record)
    os._exit(0)
