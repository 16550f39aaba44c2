/** The `baton` command: parse, run, and turn Baton's errors into one line and exit code 2. */
import { BatonError } from '../errors.ts';
import { buildProgram } from './program.ts';

const program = buildProgram();

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof BatonError) {
    console.error(`baton: ${err.code}: ${err.message}`);
    process.exitCode = 2;
  } else if (err instanceof TypeError) {
    console.error(`baton: ${err.message}`);
    process.exitCode = 2;
  } else {
    throw err;
  }
}
