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
    # an argument that is not a plain value (a function, an object of the test's): it cannot be sent to the solution
    pass


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
_RK = {"table": {}, "counts": {}, "asked": None, "assuming": 0, "flags": set()}


def _rk_ask(target, kind, payload):
    """The solution's result for one call of the test: from the answers table, else asked (probe) or missing."""
    try:
        encoded = _rk_encode(payload, handles=True)
        key = kind + "\0" + target + "\0" + json.dumps(encoded, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        _RK["flags"].add("undecidable")
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
        return _rk_decode(entry["value"])
    if "object" in entry:
        return _RkStub(qid)
    if "raise" in entry and entry["raise"] not in ("StopIteration", "StopAsyncIteration"):
        error = getattr(builtins, entry["raise"], None)
        error = error if isinstance(error, type) and issubclass(error, Exception) else Exception
        raise error("raised by the solution")
    _RK["flags"].add("fails")
    raise _RkFails(qid)


def _rk_replay(site, parts):
    return _rk_ask(site, "site", list(parts))


class _RkStub:
    # a value of the solution's that is not plain (a function, class or instance): only calls, attribute reads and
    # writes reach it, each one asked like any other call
    __slots__ = ("_rk",)

    def __init__(self, handle):
        object.__setattr__(self, "_rk", handle)

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


def _rk_test_scope(base, seed, modules):
    # builtins whose import hands the test its private `random` (imports inside check() included)
    private = _rk_test_random(seed)
    real_import = builtins.__import__

    def test_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "random" and level == 0:
            return private
        return real_import(name, globals, locals, fromlist, level)

    test_builtins = dict(builtins.__dict__, __import__=test_import)
    scope = dict(base)
    scope.update(modules)
    if "random" in modules:
        scope["random"] = private
    scope["__builtins__"] = test_builtins
    return scope


def _rk_run_program(source, check, modules, asked):
    # one run of a program test over the answers table: "passed", "failed", "missing", "undecidable" or "probed"
    _RK.update(table=check["table"], counts={}, asked=asked, asked_ids=set(), assuming=0, flags=set())
    base = {"__rk_replay": _rk_replay, "__rk_assuming": _RkAssuming(), "__name__": "__rk_test__"}
    try:
        exec(compile(source, "<test>", "exec"), _rk_test_scope(base, check["seed"], modules))
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
        return {"undecidable": "passes the solution a value that is not plain data (a function or an object)"}
    if outcome.startswith("errored:"):
        return {"errored": outcome[8:]}
    if outcome != "missing":
        return {"passed": outcome == "passed"}
    asked = []
    if _rk_run_program(check["probe"], check, modules, asked) == "undecidable":
        return {"undecidable": "passes the solution a value that is not plain data (a function or an object)"}
    return {"asked": asked}


def _rk_glue_check(check, modules):
    scope = dict(modules, __builtins__=builtins, __rk_v=[_rk_decode(v) for v in check["values"]])
    try:
        return {"passed": bool(eval(compile(check["source"], "<test>", "eval"), scope))}
    except Exception as exc:
        return {"errored": type(exc).__name__[:60]}


# --------------------------------------------------------------------------------------- solution side: answering
def _rk_entry(value):
    try:
        return {"value": _rk_encode(value)}
    except (TypeError, ValueError, RecursionError):
        return {"opaque": True} if type(value) in _RK_PLAIN else {"object": True}


def _rk_answer(spec, scope):
    # perform the asked calls in order; a result is kept by its call's id, so later calls can pass it back
    chains = {site: eval(compile(source, "<site>", "eval"), scope) for site, source in spec["chains"].items()}
    results, answers = {}, {}
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
            else:
                setattr(results[target], inputs[0], inputs[1])
                value = None
        except Exception as exc:
            name = type(exc).__name__
            builtin = getattr(builtins, name, None)
            known = isinstance(builtin, type) and issubclass(builtin, Exception) and type(exc) is builtin
            answers[qid] = {"raise": name if known else "Exception"}
            continue
        results[qid] = value
        answers[qid] = _rk_entry(value)
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
            record = {"values": [_rk_encode(eval(compile(e, "<test>", "eval"), scope)) for e in spec["exprs"]]}
    except BaseException as exc:  # the solution's failure, whatever it raised
        record = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
    emit(record)
    os._exit(0)
