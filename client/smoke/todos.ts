// Types of the app's own collection, written by the package's `profile-data-client-types` command
// into collections.ts before this compiles: a `todos` item must have its schema's `title` string.
import type { CollectionTypes } from './collections.js';

type Todo = CollectionTypes['todos']['newItem'];
export const todo: Todo = { title: 'typed by its schema' };
