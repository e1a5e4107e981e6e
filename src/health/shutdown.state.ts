import { Injectable } from '@nestjs/common';

/**
 * Whether the process is draining for shutdown. main.ts sets it on SIGTERM/SIGINT so that
 * readiness fails at once and load balancers stop sending new work while in-flight requests end.
 * Responses that would otherwise stay open (event streams, long polls) listen for it and end.
 */
@Injectable()
export class ShutdownState {
  private isDraining = false;
  private readonly listeners = new Set<() => void>();

  get draining(): boolean {
    return this.isDraining;
  }

  startDraining(): void {
    this.isDraining = true;
    for (const listener of [...this.listeners]) listener();
    this.listeners.clear();
  }

  /** Calls `listener` when draining starts (at once if it has); returns the unsubscribe. */
  onDrain(listener: () => void): () => void {
    if (this.isDraining) {
      listener();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
