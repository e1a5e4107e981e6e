// Change feed fan-out: N Server-Sent Events clients on one namespace, M items posted; how many
// events per second reach the clients altogether, and what the clients cost the service in memory.
import { call } from './api';
import { commands } from './live-queries';
import { cpuSecondsOf, memoryOf } from './processes';
import type { Target } from './servers';
import { openStreams } from './sse-streams';

export interface FanOutResult {
  clients: number;
  events: number;
  /** From the first POST until every client had every event. */
  seconds: number;
  /** Events delivered over all clients per second. */
  deliveredPerSecond: number;
  rssIdleMiB: number;
  rssWithClientsMiB: number;
  rssAfterMiB: number;
  /** Clients that did not get every event within the time limit. */
  incomplete: number;
  /** The service's CPU per event from the first POST until the last delivery (the POSTs' own included). */
  cpuMsPerEvent: number;
  /** The service's database commands per event over the same time (the POSTs' own included). */
  commandsPerEvent: number;
}

const mib = (kb: number | undefined): number => Math.round(((kb ?? 0) / 1024) * 10) / 10;

export async function sseFanOut(
  service: Target,
  key: string,
  options: { clients: number; events: number; timeoutMs: number },
): Promise<FanOutResult> {
  const collection = `fanout${Date.now()}`;
  const rssIdle = memoryOf(service.child.pid)?.rssKb;
  const queries = Array.from(
    { length: options.clients },
    () => `collection=${collection}&resource=item`,
  );
  const { counts, close } = await openStreams(service, key, queries);
  await new Promise((r) => setTimeout(r, 300));
  const rssWithClients = memoryOf(service.child.pid)?.rssKb;

  const commandsBefore = await commands(service.metricsUrl);
  const cpuBefore = cpuSecondsOf(service.child.pid);
  const started = performance.now();
  for (let n = 0; n < options.events; n += 1)
    await call(service.url, 'POST', `/data/${collection}`, { key, body: { item: { n } } });
  const deadline = Date.now() + options.timeoutMs;
  while (counts.some((c) => c < options.events) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = cpuSecondsOf(service.child.pid) - cpuBefore;
  const commandCount = (await commands(service.metricsUrl)) - commandsBefore;
  const delivered = counts.reduce((sum, c) => sum + Math.min(c, options.events), 0);
  const rssAfter = memoryOf(service.child.pid)?.rssKb;
  close();
  return {
    clients: options.clients,
    events: options.events,
    seconds: Math.round(seconds * 100) / 100,
    deliveredPerSecond: Math.round(delivered / seconds),
    rssIdleMiB: mib(rssIdle),
    rssWithClientsMiB: mib(rssWithClients),
    rssAfterMiB: mib(rssAfter),
    incomplete: counts.filter((c) => c < options.events).length,
    cpuMsPerEvent: Math.round((cpuSeconds * 1000 * 100) / options.events) / 100,
    commandsPerEvent: Math.round((commandCount * 100) / options.events) / 100,
  };
}

export function fanOutMarkdown(result: FanOutResult | undefined): string {
  if (!result) return '';
  return [
    '## Change feed: Server-Sent Events fan-out',
    '',
    `${result.clients} clients stream one namespace (\`GET /events/stream\`) while ${result.events} items are posted one after the other; the time runs from the first POST until every client has every event. \`CPU ms/event\` and \`DB cmds/event\`: the service's CPU time and database commands (\`mongodb_commands_total\`) over that time per event posted, the POSTs' own included (the live queries below give the same without streams).`,
    '',
    '| clients | events | seconds | events delivered/s (all clients) | CPU ms/event | DB cmds/event | RSS idle | RSS with clients | RSS after | clients short of events |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    `| ${result.clients} | ${result.events} | ${result.seconds} | ${result.deliveredPerSecond.toLocaleString('en-US')} | ${result.cpuMsPerEvent} | ${result.commandsPerEvent} | ${result.rssIdleMiB} MiB | ${result.rssWithClientsMiB} MiB | ${result.rssAfterMiB} MiB | ${result.incomplete} |`,
    '',
  ].join('\n');
}
