// The part of autocannon's API that bench/load.ts uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      body?: string;
      headers?: Record<string, string>;
      /** Called before each request is sent; returns the request to send. */
      setupRequest?: (request: Request) => Request;
    }

    interface Options {
      url: string;
      connections: number;
      /** Seconds. */
      duration: number;
      /** Seconds per request. */
      timeout: number;
      headers: Record<string, string>;
      requests: Request[];
    }

    interface Result {
      errors: number;
      timeouts: number;
    }

    interface Instance extends EventEmitter {
      on(
        event: 'response',
        listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void,
      ): this;
    }
  }

  function autocannon(
    options: autocannon.Options,
    callback: (error: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;

  export = autocannon;
}
