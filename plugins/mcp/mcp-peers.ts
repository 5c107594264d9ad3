import { requirePeers } from 'skein';

// The MCP SDK is an optional peer: importing skein/mcp without it fails at once, naming it and
// the npm install line. The SDK itself is still loaded on first connect (see mcp-sdk.ts).
requirePeers('skein/mcp', ['@modelcontextprotocol/sdk']);
