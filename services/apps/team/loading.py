"""LAB_APP, imported and recognised: an ASGI app or a WSGI app, or one line saying what is wrong.

`package.module:attribute` (the attribute may be dotted, `module:app.api`) or
`package.module:factory()`, called with no arguments. ASGI: a coroutine function, or an object
whose `__call__` is one, taking (scope, receive, send). WSGI: a plain callable taking (environ,
start_response). Classes are neither (ASGI 2's single callables are not served).
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from typing import Any

from workload.served_by import AppError, Interface

_SPEC = re.compile(r"^(?P<module>[\w.]+):(?P<attribute>[\w.]+)(?P<call>\(\))?$")
ASGI_SHAPE = "an ASGI app (async def app(scope, receive, send))"
WSGI_SHAPE = "a WSGI app (def app(environ, start_response))"


@dataclass(frozen=True)
class LoadedApp:
    app: Any
    interface: Interface
    framework: str  # the distribution the app's class comes from (lower case), else the interface


def load_app(spec: str) -> LoadedApp:
    """Import and recognise the app `spec` names; AppError if it cannot be served."""
    if not spec:
        raise AppError("LAB_APP is not set: name the app as package.module:attribute")
    match = _SPEC.match(spec)
    if match is None:
        raise AppError(f"LAB_APP={spec}: expected package.module:attribute or package.module:factory()")
    module_name, attribute = match["module"], match["attribute"]
    found: Any = _import(spec, module_name)
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise AppError(f"LAB_APP={spec}: {module_name} has no attribute {attribute}")
        found = getattr(found, part)
    if match["call"]:
        try:
            found = found()
        except Exception as error:
            raise AppError(f"LAB_APP={spec}: calling {attribute}() raised {_named(error)}") from None
    interface = interface_of(found)
    if interface is None:
        shown = f"an object of type {type(found).__name__}"
        if inspect.isclass(found) or inspect.isfunction(found):
            shown = f"the {'class' if inspect.isclass(found) else 'function'} {found.__name__}"
        raise AppError(f"LAB_APP={spec}: {shown} is neither {ASGI_SHAPE} nor {WSGI_SHAPE}")
    return LoadedApp(found, interface, framework_of(found, interface))


def _named(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _import(spec: str, module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if module_name == missing or module_name.startswith(f"{missing}."):
            where = "the working directory and PYTHONPATH"
            raise AppError(f"LAB_APP={spec}: no module named {missing} (imported from {where})") from None
        raise AppError(f"LAB_APP={spec}: importing {module_name} raised {_named(error)}") from None
    except (Exception, SystemExit) as error:
        raise AppError(f"LAB_APP={spec}: importing {module_name} raised {_named(error)}") from None


def _accepts(function: Any, count: int) -> bool:
    """Whether `function` can be called with `count` positional arguments."""
    try:
        inspect.signature(function).bind(*range(count))
    except (TypeError, ValueError):
        return False
    return True


def interface_of(app: Any) -> Interface | None:
    if inspect.isclass(app) or not callable(app):
        return None
    call = app if inspect.isfunction(app) or inspect.ismethod(app) else getattr(app, "__call__", None)  # noqa: B004
    if inspect.iscoroutinefunction(app) or inspect.iscoroutinefunction(call):
        return "asgi" if _accepts(app, 3) else None
    return "wsgi" if _accepts(app, 2) else None


def framework_of(app: Any, interface: Interface) -> str:
    """The distribution the app's class comes from (fastapi, flask, django...), else the interface
    (a bare function, or a class of the app's own)."""
    if inspect.isfunction(app) or inspect.ismethod(app):
        module = getattr(app, "__self__", None).__class__.__module__ if inspect.ismethod(app) else ""
    else:
        module = type(app).__module__
    distributions = packages_distributions().get(module.partition(".")[0], [])
    return distributions[0].lower() if distributions else interface
