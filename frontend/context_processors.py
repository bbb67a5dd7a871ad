from core import roles as role_rules


def roles(request):
    user = getattr(request, "user", None)
    return {
        "user_roles": sorted(role_rules.role_names(user)),
        "is_researcher": role_rules.is_researcher(user),
        "is_adjudicator": role_rules.is_adjudicator(user),
        "is_admin_role": role_rules.is_admin(user),
        "is_annotator": "annotator" in role_rules.role_names(user),
    }
