// `npm run config:reference`: writes docs/configuration.md from src/config/environment and
// .env.example (reference.ts); the unit test beside it fails until it is run after a change.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { generateReference, REFERENCE, ROOT } from './reference';

writeFileSync(REFERENCE, generateReference());
process.stdout.write(`wrote ${relative(ROOT, REFERENCE)}\n`);
