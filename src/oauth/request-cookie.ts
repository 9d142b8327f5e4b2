import type { FastifyRequest } from 'fastify';

/** The value of the cookie `name` the request carries, if any (the pages' own cookies). */
export function requestCookie(request: FastifyRequest, name: string): string | undefined {
  return (request.headers.cookie ?? '')
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${name}=`))
    ?.slice(name.length + 1);
}
