import { connect, createServer, type Socket } from 'node:net';
import { BSON, type Document } from 'mongodb';

/** OP_MSG, the only opcode a current driver sends commands with (no compression configured). */
const OP_MSG = 2013;
const CHECKSUM_PRESENT = 1;

/**
 * A TCP proxy in front of the test database that can hold chosen commands: a held command is
 * never forwarded and never answered, so the service stops exactly there while every other
 * command (on its other connections) goes on. Tests use it to put a hang or a crash at one step
 * of a write, deterministically and without a hook in the service.
 */
export interface WireProxy {
  /** The database URI through the proxy. */
  uri: string;
  /** From now on, commands whose body `matches` are held. */
  hold(matches: (command: Document) => boolean): void;
  /** Holds nothing more, and forwards what is held (the service goes on as if the database had been slow). */
  release(): void;
  /**
   * The next command whose body `matches` is forwarded, and the database's reply to it never
   * reaches the service: the command happened, and the service cannot know (a reply lost on the
   * network; the driver's socket timeout ends the wait). Once: later commands are answered.
   */
  dropReplyOnce(matches: (command: Document) => boolean): void;
  /** The commands whose reply was dropped so far, decoded. */
  droppedReplies(): Document[];
  /**
   * From now on, the first message of each new connection (the driver's handshake) reaches the
   * database `ms` later; undefined stops that. What a host starved of CPU looks like to a
   * connection's timers, made to happen on every connection rather than by chance.
   */
  delayHandshakes(ms: number | undefined): void;
  /** How many commands named `name` (their first key) have been forwarded so far. */
  forwarded(name: string): number;
  /** How many commands have been held so far. */
  held(): number;
  /** The commands held so far, decoded (an insert's documents under `documents`). */
  heldCommands(): Document[];
  close(): Promise<void>;
}

/**
 * The command of an OP_MSG: its kind-0 section, with the documents of its kind-1 sections (a
 * driver sends an insert's documents as one) under their identifier; undefined for anything else.
 */
function commandOf(message: Buffer): Document | undefined {
  if (message.readInt32LE(12) !== OP_MSG) return undefined;
  const flags = message.readUInt32LE(16);
  const end = message.length - (flags & CHECKSUM_PRESENT ? 4 : 0);
  let command: Document | undefined;
  const sequences: Record<string, Document[]> = {};
  let offset = 20;
  while (offset < end) {
    const kind = message.readUInt8(offset);
    const size = message.readInt32LE(offset + 1);
    const section = message.subarray(offset + 1, offset + 1 + size);
    if (kind === 0) command = BSON.deserialize(section);
    else {
      const nul = section.indexOf(0, 4);
      const documents: Document[] = [];
      for (let at = nul + 1; at < section.length; at += section.readInt32LE(at))
        documents.push(BSON.deserialize(section.subarray(at, at + section.readInt32LE(at))));
      sequences[section.toString('utf8', 4, nul)] = documents;
    }
    offset += 1 + size;
  }
  return command && { ...command, ...sequences };
}

/** The name of an OP_MSG's command (the first key of its kind-0 section), without decoding it. */
function commandName(message: Buffer): string | undefined {
  if (message.length < 27 || message.readInt32LE(12) !== OP_MSG) return undefined;
  // Header (16), flags (4), section kind (1), the document's size (4), its first element's type (1).
  if (message.readUInt8(20) !== 0) return undefined;
  const start = 26;
  const end = message.indexOf(0, start);
  return end > start ? message.toString('utf8', start, end) : undefined;
}

export async function startWireProxy(target: string): Promise<WireProxy> {
  const url = new URL(target);
  const host = url.hostname;
  const port = Number(url.port || 27017);
  let matches: ((command: Document) => boolean) | undefined;
  let handshakeDelayMs: number | undefined;
  const forwardedByName = new Map<string, number>();
  const held: Document[] = [];
  let dropMatches: ((command: Document) => boolean) | undefined;
  const dropped: Document[] = [];
  const sockets = new Set<Socket>();
  /** Per connection stuck behind a held command: forwards it and what came after. */
  const resumes = new Set<() => void>();

  const count = (message: Buffer) => {
    const name = commandName(message);
    if (name) forwardedByName.set(name, (forwardedByName.get(name) ?? 0) + 1);
  };

  const server = createServer((client) => {
    const upstream = connect(port, host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      // A peer that goes away (a SIGKILLed service) takes its other half with it.
      socket.on('error', () => undefined);
    }
    client.on('close', () => {
      resumes.delete(resume);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
    // Replies go back message by message, but for those dropReplyOnce swallows (by the id of
    // the request they answer).
    const swallowed = new Set<number>();
    let replies: Buffer = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      replies = replies.length === 0 ? chunk : Buffer.concat([replies, chunk]);
      while (replies.length >= 16 && replies.length >= replies.readInt32LE(0)) {
        const length = replies.readInt32LE(0);
        const reply = replies.subarray(0, length);
        replies = replies.subarray(length);
        if (!swallowed.delete(reply.readInt32LE(8))) client.write(reply);
      }
    });

    let pending = Buffer.alloc(0);
    let stuck: Buffer | undefined;
    let handshake = true;
    const forward = () => {
      while (!stuck && pending.length >= 4) {
        const length = pending.readInt32LE(0);
        if (pending.length < length) return;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (handshake && handshakeDelayMs !== undefined) {
          handshake = false;
          stuck = message;
          setTimeout(resume, handshakeDelayMs);
          return;
        }
        handshake = false;
        const command = matches && commandOf(message);
        const dropping = dropMatches && commandOf(message);
        if (dropping && dropMatches?.(dropping)) {
          dropMatches = undefined;
          dropped.push(dropping);
          swallowed.add(message.readInt32LE(4));
        }
        if (command && matches?.(command)) {
          stuck = message;
          held.push(command);
          resumes.add(resume);
          return;
        }
        count(message);
        upstream.write(message);
      }
    };
    const resume = () => {
      resumes.delete(resume);
      if (stuck) {
        count(stuck);
        upstream.write(stuck);
      }
      stuck = undefined;
      forward();
    };
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      forward();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');

  // One server, straight through the proxy (a replica set's hosts would bypass it).
  const proxied = new URL(target);
  proxied.host = `127.0.0.1:${address.port}`;
  proxied.searchParams.set('directConnection', 'true');
  return {
    uri: proxied.toString(),
    hold: (match) => {
      matches = match;
    },
    release: () => {
      matches = undefined;
      for (const resume of [...resumes]) resume();
    },
    dropReplyOnce: (match) => {
      dropMatches = match;
    },
    droppedReplies: () => [...dropped],
    delayHandshakes: (ms) => {
      handshakeDelayMs = ms;
    },
    forwarded: (name) => forwardedByName.get(name) ?? 0,
    held: () => held.length,
    heldCommands: () => [...held],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}
