import { federationSuite } from './federation-suite.ts';

federationSuite('sqlite', async () => ({}));
