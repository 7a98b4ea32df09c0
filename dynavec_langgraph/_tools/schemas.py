"""The JSON schema of a tool's arguments, made from its function's signature."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, TypeAdapter, WithJsonSchema, create_model

from dynavec_langgraph._dynavec.records import AgentState
from dynavec_langgraph._tools.calls import ToolFunc
from dynavec_langgraph._types import JSONSchema, TypeAnnotation

__all__ = ["json_schema", "signature_model"]


class _ArgsBase(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="ignore")


_UNTYPED: TypeAnnotation = Annotated[Any, WithJsonSchema({"type": "string"})]
"""What a parameter the schema cannot describe becomes: shown to the model as a string,
passed to the function as given (an object handed to ``execute`` reaches it unchanged)."""


def _hints(func: ToolFunc) -> dict[str, TypeAnnotation]:
    """The annotations of ``func``, resolved one by one: one that cannot be resolved (a name
    imported only under ``TYPE_CHECKING``) becomes :data:`_UNTYPED`, the others are kept."""
    try:
        return get_type_hints(func)
    except Exception:  # some annotation does not resolve: resolve them one by one below
        pass
    out: dict[str, TypeAnnotation] = {}
    for pname, raw in getattr(func, "__annotations__", {}).items():
        try:
            out[pname] = get_type_hints(_Probe(raw, func), include_extras=True)["x"]
        except Exception:  # unresolvable: a string schema (dynavec's rule)
            out[pname] = _UNTYPED
    return out


class _Probe:
    """An object with one annotation, to resolve it in ``func``'s globals."""

    def __init__(self, annotation: TypeAnnotation, func: ToolFunc) -> None:
        self.__annotations__ = {"x": annotation}
        self.__globals__ = getattr(func, "__globals__", {})
        self.__module__ = getattr(func, "__module__", __name__)


_JSON_SCALARS = (str, int, float, bool)
"""Annotations pydantic always has a schema of: taken as they are, without building one."""


def _field_type(annotation: TypeAnnotation) -> TypeAnnotation:
    """``annotation`` if pydantic can build a schema of it, else :data:`_UNTYPED` (dynavec
    mapped what it could not type to a string schema; never crash at decoration)."""
    if annotation is inspect.Parameter.empty:
        return Any
    if annotation in _JSON_SCALARS:
        return annotation
    try:
        TypeAdapter(annotation).json_schema()
    except Exception:  # pydantic raises several kinds here
        return _UNTYPED
    return annotation


def signature_model(name: str, func: ToolFunc) -> tuple[type[BaseModel], str | None]:
    """A pydantic model of ``func``'s parameters, and the name of its ``AgentState`` one."""
    sig = inspect.signature(func)
    hints = _hints(func)
    fields: dict[str, Any] = {}  # pydantic field definitions: (annotation, default)
    state_param: str | None = None
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, param.annotation)
        if annotation is AgentState:
            state_param = pname
            continue
        if isinstance(annotation, str):
            annotation = _UNTYPED  # an annotation that never resolved
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (_field_type(annotation), default)
    model = create_model(f"{name}_args", __base__=_ArgsBase, **fields)
    return model, state_param


def json_schema(model: type[BaseModel]) -> JSONSchema:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    schema.setdefault("type", "object")
    return schema
