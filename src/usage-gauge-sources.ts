import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Tenant } from './common/tenancy/namespace';
import { CollectionsService } from './data';
import { FilesService } from './files';
import { ErasureService } from './lifecycle';
import { ProfileService } from './profile';
import { TeamService } from './team';
import type { GaugeValues, UsageGaugeSource } from './usage';

/** Users or teams read per page while the snapshot walks every tenant. */
const PAGE = 200;

/**
 * The usage snapshot's port, answered by the modules that own what it measures: users and teams
 * (profile, team), items (data's collection registry and storage), file bytes (the files quota
 * ledger) and erasures (lifecycle).
 *
 * The services are looked up when first asked, not injected: they depend (through the plan
 * limits and the feature modules) on the global usage module that holds this port, so injected
 * they and the port would each wait for the other. By the first snapshot every provider is built.
 */
@Injectable()
export class TenantGaugeSources implements UsageGaugeSource {
  constructor(private readonly modules: ModuleRef) {}

  private service<T>(type: new (...args: never[]) => T): T {
    return this.modules.get(type, { strict: false });
  }

  async *tenants(): AsyncIterable<Tenant> {
    const profiles = this.service(ProfileService);
    for (let afterSubject: string | undefined; ;) {
      const users = await profiles.listUsers({
        limit: PAGE,
        ...(afterSubject !== undefined ? { afterSubject } : {}),
      });
      for (const user of users) yield { kind: 'user', id: user.subject };
      if (users.length < PAGE) break;
      afterSubject = users.at(-1)?.subject;
    }
    const teams = this.service(TeamService);
    for (let afterId: string | undefined; ;) {
      const page = await teams.list({ limit: PAGE, ...(afterId !== undefined ? { afterId } : {}) });
      for (const team of page.teams) yield { kind: 'team', id: team.id };
      if (!page.more) break;
      afterId = page.teams.at(-1)?.id;
    }
  }

  async measure(tenant: Tenant): Promise<GaugeValues> {
    const [itemsStored, files] = await Promise.all([
      this.service(CollectionsService).storedItems(tenant),
      this.service(FilesService).usage(tenant),
    ]);
    return { itemsStored, fileBytesStored: files.used };
  }

  present(tenant: Tenant): Promise<boolean> {
    return this.service(ErasureService).isPresent(tenant);
  }
}
