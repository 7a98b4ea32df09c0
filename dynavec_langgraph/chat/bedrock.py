"""``BedrockChatModel``: dynavec's Amazon Bedrock provider (the Converse API), backed by
``langchain_aws.ChatBedrockConverse`` (extra ``bedrock``).

Example:
    >>> model = BedrockChatModel(region_name="us-east-1")
    >>> model.model, type(model.langchain_model).__name__, model._client.meta.region_name
    ('anthropic.claude-3-haiku-20240307-v1:0', 'ChatBedrockConverse', 'us-east-1')
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from dynavec_langgraph._types import ForeignObject, JSONObject, UserPayload
from dynavec_langgraph.chat._providers import (
    ProviderChatModel,
    field_of,
    parsed_arguments,
    provider_imports,
    turns,
)
from dynavec_langgraph.chat.base import ChatChunk, ChatResult, Message, Tool, ToolCall

__all__ = ["BedrockChatModel"]


class BedrockChatModel(ProviderChatModel):
    """Bedrock's Converse API through ``ChatBedrockConverse`` (docs/compatibility.md, P6).

    Args:
        model: the model id (``self.model``).
        region_name: the region; ``None`` uses boto3's chain (``AWS_REGION``,
            ``AWS_DEFAULT_REGION``, the profile). No region at all raises botocore's
            ``NoRegionError`` here. The endpoint is boto3's too
            (``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``).

    Raises:
        MissingDependencyError: ``boto3`` / ``langchain-aws`` are not installed
            (``pip install 'dynavec-langgraph[bedrock]'``).
    """

    join_system_messages = True

    def __init__(
        self,
        model: str = "anthropic.claude-3-haiku-20240307-v1:0",
        region_name: str | None = None,
    ) -> None:
        super().__init__()
        with provider_imports("BedrockChatModel", "boto3", "langchain-aws", "bedrock"):
            import boto3
            from langchain_aws import ChatBedrockConverse
        self.model = model
        client = boto3.client("bedrock-runtime", region_name=region_name)
        backing = ChatBedrockConverse(
            model=model, client=client, region_name=client.meta.region_name
        )
        self._back_with(backing, client)

    # --- dynavec's direct SDK path -----------------------------------------------------

    def _request(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> JSONObject:
        system = [{"text": m.content} for m in messages if m.role == "system" and m.content]
        out = turns(
            messages,
            text=lambda text: {"text": text},
            tool_use=lambda c: {
                "toolUse": {
                    "toolUseId": c.id,
                    "name": c.name,
                    "input": parsed_arguments(c.arguments),
                }
            },
            tool_result=lambda m: {
                "toolResult": {
                    "toolUseId": m.tool_call_id,
                    "content": [{"text": m.content or ""}],
                    "status": "success",
                }
            },
        )
        args: JSONObject = {"modelId": self.model, "messages": out, "system": system}
        if tools:
            specs = [
                {
                    "toolSpec": {
                        "name": t.name,
                        "description": t.description,
                        "inputSchema": {"json": t.parameters},
                    }
                }
                for t in tools
            ]
            args["toolConfig"] = {"tools": specs}
        return {**args, **kwargs}

    def _sdk_invoke(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> ChatResult:
        response = self._client.converse(**self._request(messages, tools, kwargs))
        message = field_of(field_of(response, "output") or {}, "message") or {}
        text, calls = "", []
        for block in field_of(message, "content") or []:
            if "text" in block:
                text += block["text"] or ""
            if "toolUse" in block:
                use = block["toolUse"]
                calls.append(ToolCall(use["toolUseId"], use["name"], json.dumps(use.get("input"))))
        role: ForeignObject = field_of(message, "role") or "assistant"
        return ChatResult(
            Message(role, text or None, calls), field_of(response, "stopReason"), raw=response
        )

    def _sdk_stream(
        self, messages: Sequence[Message], tools: list[Tool] | None, kwargs: dict[str, UserPayload]
    ) -> Iterator[ChatChunk]:
        response = self._client.converse_stream(**self._request(messages, tools, kwargs))
        for event in field_of(response, "stream") or []:
            block = event.get("contentBlockDelta") if isinstance(event, dict) else None
            if not block:
                continue
            delta = block.get("delta") or {}
            if "text" in delta:
                yield ChatChunk(content=delta["text"])
            if "toolUse" in delta:
                partial = (delta["toolUse"] or {}).get("input") or ""
                yield ChatChunk(tool_calls=[ToolCall("", "", partial)])
