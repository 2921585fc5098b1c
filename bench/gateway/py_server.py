#!/usr/bin/env python3
"""A downstream MCP server on the official Python SDK (low-level server,
stdio) serving the tools in a JSON file; each echoes its arguments back.
Used by bench_starts.py: starting it costs what a real Python MCP server
costs (the interpreter and the SDK's imports, about half a second of CPU).

Usage: py_server.py TOOLS.json
"""

import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [types.Tool(**t) for t in json.load(open(sys.argv[1]))]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    text = json.dumps(params.arguments or {})
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main():
    server = Server("bench", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())


anyio.run(main)
