import {
  ApiProblemError,
  createApiClient,
  unwrap,
  type ApiClient,
  type ApiClientOptions,
  type Schemas,
} from '@profile-data/client';
import { createContext, useContext } from 'react';
import { apiBaseUrl, type Session } from './session';

export type Me = Schemas['MeDto'];

/** What every view gets: the typed client for the signed-in key, and what the key is. */
export interface Api {
  client: ApiClient;
  /** The options the client was made with, for the helpers that take them (files, transfer, SSE). */
  options: ApiClientOptions;
  session: Session;
  me: Me;
}

export function clientOptions(session: Session): ApiClientOptions {
  return {
    baseUrl: apiBaseUrl(),
    apiKey: session.apiKey,
    // A key bound to a branch must not send another one: '' then means "the key's own".
    ...(session.branch !== '' ? { branch: session.branch } : {}),
    ...(session.team !== '' ? { team: session.team } : {}),
  };
}

export function clientFor(session: Session): ApiClient {
  return createApiClient(clientOptions(session));
}

const ApiContext = createContext<Api | undefined>(undefined);

export const ApiProvider = ApiContext.Provider;

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside a signed-in console');
  return api;
}

export { ApiProblemError, unwrap };
