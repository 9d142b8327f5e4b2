"""yoto_api's own device login, refresh and card-library call, pointed at Cardshelf (base URLs changed only).

python scripts/public-clients/yoto-api-sign-in.py YOTO_API_CHECKOUT BASE_URL EMAIL PASSWORD
yoto_api (github:cdnninja/yoto_api) is a checkout given by path, never copied in; it needs aiohttp
and aiomqtt (pip). A person's approval at /activate is made with plain form posts.
"""
import asyncio, re, sys
import aiohttp
sys.path.insert(0, sys.argv[1])
from yoto_api.rest import endpoints
BASE, EMAIL, PASSWORD = sys.argv[2], sys.argv[3], sys.argv[4]
endpoints.BASE_URL = BASE
endpoints.AUTH_URL = BASE + '/oauth/device/code'
endpoints.TOKEN_URL = BASE + '/oauth/token'
from yoto_api.auth import Auth
from yoto_api.rest.client import RestClient

async def approve(user_code):
    """A person at /activate (plain form posts, as a browser sends them)."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as s:
        f = lambda html, n: re.search(f'name="{n}" value="([^"]*)"', html).group(1)
        act = lambda html: re.search(r'<form method="post" action="([^"]+)"', html).group(1).replace('&amp;', '&')
        html = await (await s.get(BASE + '/activate')).text()
        html = await (await s.post(BASE + '/activate', data={'xsrf': f(html, 'xsrf'), 'user_code': user_code})).text()
        html = await (await s.post(BASE + '/activate', data={'xsrf': f(html, 'xsrf'), 'user_code': f(html, 'user_code'), 'confirm': 'yes'})).text()
        html = await (await s.post(BASE + act(html), data={'csrf': f(html, 'csrf'), 'email': EMAIL, 'password': PASSWORD})).text()
        html = await (await s.post(BASE + act(html), data={'csrf': f(html, 'csrf'), 'decision': 'approve'})).text()
        assert 'Device connected' in html, html[:400]

async def main():
    async with aiohttp.ClientSession() as session:
        auth = Auth(session, client_id='yoto-api-python')
        started = await auth.device_code_flow_start()
        print('device code started: interval', started.get('interval'), 'verification_uri', started['verification_uri'])
        poll = asyncio.create_task(auth.poll_for_token(started))
        await asyncio.sleep(6)  # at least one pending 403 poll first
        await approve(started['user_code'])
        token = await poll
        print('signed in: token valid until', token.valid_until, 'refresh token present', bool(token.refresh_token))
        rest = RestClient(session)
        library = await rest.get_card_library(token)
        print('card library: keys', sorted(library.keys()), 'cards', len(library.get('cards', [])))
        renewed = await auth.refresh(token)
        print('refreshed: new refresh token', renewed.refresh_token != token.refresh_token and bool(renewed.refresh_token))
        library = await rest.get_card_library(renewed)
        print('card library with the refreshed token: cards', len(library.get('cards', [])))

asyncio.run(main())
