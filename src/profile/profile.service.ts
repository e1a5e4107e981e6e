import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError } from '../common/errors';
import { ProfileRepository, rootKey, type ProfileKey } from './profile.repository';
import type { Plan, Profile } from './profile.types';

@Injectable()
export class ProfileService {
  constructor(private readonly profiles: ProfileRepository) {}

  /**
   * Registers a user and creates its root profile (operator API). The user registry's unique
   * indexes decide duplicates; without transactions, a failed profile insert removes the user again.
   */
  async createUser(email: string, subject: string = randomUUID()): Promise<Profile> {
    const normalizedEmail = email.trim().toLowerCase();
    if (!(await this.profiles.insertUser(subject, normalizedEmail))) {
      throw new DomainError('DUPLICATE_USER', 'A user with this subject or email exists already.');
    }
    try {
      const profile = await this.profiles.insert(rootKey(subject), { email: normalizedEmail });
      if (!profile)
        throw new DomainError(
          'DUPLICATE_USER',
          `A root profile for subject ${subject} exists already.`,
        );
      return profile;
    } catch (error) {
      await this.profiles.deleteUser(subject);
      throw error;
    }
  }

  async getRoot(subject: string): Promise<Profile> {
    const profile = await this.profiles.findByKey(rootKey(subject));
    if (!profile) throw new DomainError('PROFILE_NOT_FOUND', `No user with subject ${subject}.`);
    return profile;
  }

  /** The sub profile with this key, or null. */
  async findSub(key: ProfileKey): Promise<Profile | null> {
    return this.profiles.findByKey(key);
  }

  async setPlans(subject: string, plans: Plan[]): Promise<Profile> {
    const profile = await this.profiles.setPlans(rootKey(subject), plans);
    if (!profile) throw new DomainError('PROFILE_NOT_FOUND', `No user with subject ${subject}.`);
    return profile;
  }
}
