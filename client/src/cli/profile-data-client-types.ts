#!/usr/bin/env node
// `PDS_API_KEY=<key> npx profile-data-client-types --url <base> --out <file>`: the package's bin,
// TypeScript types for the key's own data collections from the deployment's
// GET /data/openapi.json (see the package README, "Types of your own collections").
import { runCollectionTypes } from './collection-types.js';

void runCollectionTypes(process.argv.slice(2), process.env);
