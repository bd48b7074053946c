"""Test-harness runtime that runs *inside* the sandbox, next to the untrusted solution.

Shipped to every run as ``rk_harness.py`` (``harness.py`` on the host reads this file as package data and never
imports it; the local backend's warm forkserver imports it once). ``main.py`` calls :func:`_rk_main`, which reads
``rk_spec.json``, loads the solution (or, in ``check`` mode, only the trusted glue), evaluates the call, the
expressions or the test program and writes ONE nonce-prefixed JSON record straight to fd 1. The encoder accepts
exact plain types only. Standard library only; the verdict is always computed on the host.
"""

import builtins
import collections as _rk_collections
import importlib
import json
import math
import os

# dict subclasses of the standard library that compare equal to a dict with the same items; checked by identity
_RK_DICTS = {c.__name__: c for c in (_rk_collections.Counter, _rk_collections.defaultdict, _rk_collections.OrderedDict)}


def _rk_encode(x, depth=0, handles=False):
    # handles=True (keys only): a recorded solution object stands for itself by its handle, so a test that
    # passes the solution's objects back to it (MBPP's trees built in setup code) is keyed the same in both stages
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
    if handles and (t is _RkRecorder or t is _RkStub):
        handle = object.__getattribute__(x, "_rk")
        return {"$obj": handle[0] if t is _RkRecorder else handle}
    raise TypeError("not a plain value: " + t.__name__)


def _rk_decode(x):
    if isinstance(x, list):
        return [_rk_decode(v) for v in x]
    if isinstance(x, dict):
        ((tag, body),) = x.items()
        if tag == "$float":
            return float(body)
        if tag == "$tuple":
            return tuple(_rk_decode(v) for v in body)
        if tag == "$set":
            return {_rk_decode(v) for v in body}
        if tag == "$complex":
            return complex(_rk_decode(body[0]), _rk_decode(body[1]))
        if tag == "$dict":
            return {_rk_decode(k): _rk_decode(v) for k, v in body}
        raise ValueError("unknown tag " + tag)
    return x


_RK_PLAIN = (type(None), bool, int, float, str, list, tuple, set, frozenset, dict)
_RK_TABLE = {}
_RK_OBJECTS = {}  # key -> how many solution objects that key has produced so far (handle = key#n)


def _rk_handle(key):
    count = _RK_OBJECTS.get(key, 0)
    _RK_OBJECTS[key] = count + 1
    return key + "#" + str(count)


class _RkMissing(BaseException):
    # a result the record stage did not report: the test fails, and `except Exception` in a test cannot hide it
    pass


def _rk_key(site, parts):
    return site + "|" + json.dumps(_rk_encode(parts, handles=True), sort_keys=True, allow_nan=False)


def _rk_call_parts(args, kwargs):
    return [list(args), [[k, kwargs[k]] for k in sorted(kwargs)]]


def _rk_rec(site, parts, thunk):
    try:
        key = _rk_key(site, parts)
    except Exception:
        return thunk(parts)
    try:
        value = thunk(parts)
    except Exception as exc:
        name = type(exc).__name__
        builtin = getattr(builtins, name, None)
        known = isinstance(builtin, type) and issubclass(builtin, Exception) and type(exc) is builtin
        _RK_TABLE.setdefault(key, {"raise": name if known else "Exception"})
        raise
    if type(value) not in _RK_PLAIN:
        _RK_TABLE.setdefault(key, {"object": True})
        return _RkRecorder(_rk_handle(key), value)
    try:
        entry = {"value": _rk_encode(value)}
    except Exception:
        entry = {"opaque": True}
    _RK_TABLE.setdefault(key, entry)
    return value


class _RkRecorder:
    # a solution object (function, class, instance) whose calls and attributes are recorded
    def __init__(self, site, target):
        self._rk = (site, target)

    def __call__(self, *args, **kwargs):
        site, target = self._rk
        return _rk_rec(site, _rk_call_parts(args, kwargs), lambda _: target(*args, **kwargs))

    def __getattr__(self, name):
        site, target = self._rk
        return _rk_rec(site + "." + name, [], lambda _: getattr(target, name))


def _rk_replay(site, parts):
    try:
        key = _rk_key(site, parts)
    except Exception:
        raise _RkMissing(site) from None
    entry = _RK_TABLE.get(key)
    if entry is None or "opaque" in entry:
        raise _RkMissing(key)
    if "raise" in entry:
        if entry["raise"] in ("StopIteration", "StopAsyncIteration"):
            raise _RkMissing(key)  # would silently end the test's map()/iteration: never replayed
        error = getattr(builtins, entry["raise"], None)
        error = error if isinstance(error, type) and issubclass(error, Exception) else Exception
        raise error("raised by the solution")
    if "object" in entry:
        return _RkStub(_rk_handle(key))
    return _rk_decode(entry["value"])


class _RkStub:
    # replays a recorded solution object: only what was recorded for these exact inputs
    def __init__(self, site):
        self._rk = site

    def __call__(self, *args, **kwargs):
        return _rk_replay(self._rk, _rk_call_parts(args, kwargs))

    def __getattr__(self, name):
        return _rk_replay(self._rk + "." + name, [])


def _rk_program_passes(source, scope):
    try:
        exec(compile(source, "<test>", "exec"), scope)
    except _RkMissing:
        return "diverged"
    except BaseException:
        return False
    return True


def _rk_test_random(seed):
    # the test's own `random`, seeded by the parent: record and replay draw the same inputs, and the
    # solution's use of the real module cannot shift the test's draws
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


def _rk_test_scope(base, spec, modules):
    # builtins whose import hands the test its private `random` (imports inside check() included)
    private = _rk_test_random(spec.get("seed", 0))
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


def _rk_main():
    with open("rk_spec.json") as handle:
        spec = json.load(handle)
    prefix = "\n" + spec["nonce"]
    try:
        os.remove("rk_spec.json")
    except OSError:
        pass

    def emit(record):
        data = (prefix + json.dumps(record, allow_nan=False) + "\n").encode()
        while data:
            data = data[os.write(1, data) :]

    modules = {name: importlib.import_module(name) for name in spec.get("modules", [])}
    if spec["mode"] == "check":
        passed, diverged = [], []
        for check in spec["checks"]:
            if check["values"] is None:
                passed.append(False)
                continue
            if "replay" in check:
                _RK_TABLE.clear()
                _RK_OBJECTS.clear()
                _RK_TABLE.update(check["values"])
                base = {"__rk_replay": _rk_replay, "__name__": "__rk_test__"}
                outcome = _rk_program_passes(check["replay"], _rk_test_scope(base, check, modules))
                passed.append(outcome is True)
                if outcome == "diverged":
                    diverged.append(len(passed) - 1)
                continue
            scope = dict(modules, __builtins__=builtins, __rk_v=[_rk_decode(v) for v in check["values"]])
            try:
                passed.append(bool(eval(compile(check["source"], "<test>", "eval"), scope)))
            except Exception:
                passed.append(False)
        emit({"passed": passed, "diverged": diverged})
        os._exit(0)
    with open("solution.py", encoding="utf-8") as handle:
        source = handle.read()
    scope = {"__name__": "__rk_solution__", "__builtins__": builtins, "__file__": "solution.py"}
    try:
        exec(compile(source, "solution.py", "exec"), scope)
    except BaseException as exc:
        emit({"error": "solution raised " + type(exc).__name__ + " while loading"})
        os._exit(0)
    for name, module in modules.items():
        scope.setdefault(name, module)
    try:
        if spec["mode"] == "call":
            target = scope.get(spec["fn_name"])
            if not callable(target) and isinstance(scope.get("Solution"), type):
                target = getattr(scope["Solution"](), spec["fn_name"], None)
            if not callable(target):
                emit({"error": "no function named " + spec["fn_name"]})
                os._exit(0)
            record = {"value": _rk_encode(target(*spec["args"]))}
        elif spec["mode"] == "record":
            test_scope = _rk_test_scope(dict(scope, __rk_rec=_rk_rec, __name__="__rk_test__"), spec, modules)
            _rk_program_passes(spec["program"], test_scope)
            record = {"table": _RK_TABLE}
        elif spec["mode"] == "whole":
            test_scope = _rk_test_scope(dict(scope, __name__="__rk_test__"), spec, modules)
            record = {"passed": _rk_program_passes(spec["program"], test_scope) is True}
        else:
            record = {"values": [_rk_encode(eval(compile(e, "<test>", "eval"), scope)) for e in spec["exprs"]]}
    except BaseException as exc:
        record = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
    emit(record)
    os._exit(0)
