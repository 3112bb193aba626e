"""Render every error as a Japanese page, or as `{"error": {"code", "message"}}` under /api/.

The exceptions themselves live in `judgeapp.errors`; this blueprint only renders them."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from .errors import JudgeappError

bp = Blueprint("errors", __name__)

MESSAGES = {
    400: ("bad_request", "リクエストの内容が正しくありません。"),
    403: ("forbidden", "この操作は許可されていません。"),
    404: ("not_found", "ページが見つかりません。URL を確かめてください。"),
    405: ("method_not_allowed", "この操作はこの URL では使えません。"),
    413: ("too_large", "送信された内容が大きすぎます。"),
    429: ("too_many_requests", "短時間に操作が多すぎます。少し待ってからやり直してください。"),
    500: ("server_error", "サーバーで問題が起きました。もう一度試すか、管理者に連絡してください。"),
}


def _wants_json() -> bool:
    return request.path.startswith("/api/")


def error_response(status: int, code: str, message: str):
    """The one place an error becomes a response."""
    if _wants_json():
        return jsonify({"error": {"code": code, "message": message}}), status
    return render_template("errors/error.html", status=status, message=message), status


@bp.app_errorhandler(JudgeappError)
def handle_domain_error(exc: JudgeappError):
    return error_response(exc.status, exc.code, exc.message)


@bp.app_errorhandler(CSRFError)
def handle_csrf_error(exc: CSRFError):
    return error_response(
        400,
        "csrf",
        "フォームの確認に失敗しました（ページが古くなったか、別の画面から送られました）。"
        "ブラウザで戻り、ページを読み込み直してからもう一度送信してください。",
    )


@bp.app_errorhandler(HTTPException)
def handle_http_error(exc: HTTPException):
    code, message = MESSAGES.get(exc.code or 500, ("error", exc.description or "エラーが起きました。"))
    return error_response(exc.code or 500, code, message)


@bp.app_errorhandler(Exception)
def handle_unexpected(exc: Exception):
    current_app.logger.exception("unhandled error on %s", request.path)
    code, message = MESSAGES[500]
    return error_response(500, code, message)
