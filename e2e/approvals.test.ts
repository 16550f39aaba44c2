import { approvalsSuite } from './approvals-suite.ts';

approvalsSuite('sqlite', async () => undefined);
