// The client graded: the repository's reference client (set STELLA_CONFORM_CLIENT to
// grade another build with the same tests).
import { fileURLToPath } from 'node:url';

export const client = ['python3', fileURLToPath(new URL('../../../../python/reference_client.py', import.meta.url))];
