import { Injectable } from '@nestjs/common';

/**
 * Whether the process is draining for shutdown. main.ts sets it on SIGTERM/SIGINT so that
 * readiness fails at once and load balancers stop sending new work while in-flight requests end.
 */
@Injectable()
export class ShutdownState {
  private isDraining = false;

  get draining(): boolean {
    return this.isDraining;
  }

  startDraining(): void {
    this.isDraining = true;
  }
}
