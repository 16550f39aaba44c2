import { twoOrgSuite } from './two-orgs-suite.ts';

twoOrgSuite('sqlite', async () => ({}));
