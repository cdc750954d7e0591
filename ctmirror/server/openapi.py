"""The OpenAPI document of /ctmirror/v1, generated from the method registry: one path per method and statistic,
its parameters from the request model (the same validation every surface applies)."""

from __future__ import annotations

from functools import cache
from typing import Any

from ctmirror import __version__
from ctmirror.read.registry import METHODS

ERROR = {"description": "The contract's error envelope: {success: false, error: {code, message, recovery_hint, "
                        "invalid_input}}", "content": {"application/json": {"schema": {"type": "object"}}}}


@cache
def openapi_document() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for method in METHODS.values():
        schema = method.request.model_json_schema()
        required = set(schema.get("required", []))
        parameters = [{"name": name, "in": "query", "required": name in required,
                       "description": field.get("description", ""),
                       "schema": {k: v for k, v in field.items() if k not in ("description", "title", "cli")}}
                      for name, field in schema.get("properties", {}).items()]
        operation = {"summary": method.help, "parameters": parameters,
                     "responses": {"200": {"description": "The method's answer as JSON"}, "400": ERROR, "404": ERROR,
                                   "503": ERROR}}
        paths[f"/ctmirror/v1/{method.name}"] = {
            "get": {**operation, "operationId": method.name},
            "post": {"summary": method.help, "operationId": f"{method.name}_post",
                     "requestBody": {"content": {"application/json": {"schema": schema}}},
                     "responses": operation["responses"]},
        }
    paths["/ctmirror/v1/sql"] = {"post": {
        "summary": "Read-only SQL (only when the server runs with --sql): one SELECT, a row limit and a timeout.",
        "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "required": ["query"],
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 10000}}}}}},
        "responses": {"200": {"description": "{columns, rows, truncated}"}, "400": ERROR, "404": ERROR}}}
    return {"openapi": "3.1.0", "info": {"title": "ctmirror", "version": __version__,
                                         "description": "The methods and statistics of a ctmirror warehouse. The "
                                                        "ClinicalTrials.gov v2 API is served under /api/v2."},
            "paths": paths}
