import { join } from 'node:path';
import { clusterIdentitySuite } from './identity-suite.ts';

clusterIdentitySuite('sqlite', async (dir) => ({ kind: 'sqlite', path: join(dir, 'shared.db') }));
