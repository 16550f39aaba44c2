import { mcpFederationSuite } from './mcp-federation-suite.ts';

mcpFederationSuite('sqlite', async () => ({}));
